package host

import (
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zealgo/zealgo/internal/tmplset"
	"github.com/zealgo/zealgo/interp"
)

// Public files. Every path outside /api is looked up under public/:
//
//	public/index.go         /              (a page: its func follows the return contract)
//	public/about.go         /about
//	public/admin/index.go   /admin/
//	public/admin/users.go   /admin/users
//	public/css/style.css    /css/style.css (a static file, never interpreted)
//	public/docs/index.html  /docs/         (a directory without index.go)
//
// Canonical URLs: a directory is named with a trailing slash, a page
// without one. /admin redirects to /admin/ when public/admin/ holds an
// index.go or index.html (and there is no public/admin.go); /about/
// redirects to /about when public/about.go exists and public/about/ has no
// index; /index and /admin/index redirect to / and /admin/. Redirects are
// 301 for GET and HEAD and 308 (method kept) for other methods, and keep
// the query.
//
// Never served: a path with an empty, "." or ".." segment (double
// slashes included), a backslash, NUL or control character, or an encoded
// slash; any segment ending in ".go" in any letter case (so no .go file is
// ever sent as text, however the name is spelled or escaped); any segment
// that names an editor leftover (ending in "~", ".bak", ".orig", ".swp" or
// ".tmp" in any letter case, or starting with "#"); any segment
// starting with "." (dotfiles and dot directories) except a leading
// /.well-known/; a file reached through a symlink that leaves public/, or
// whose target is a .go file or a dotfile. All of these are 404.

// publicState is the App's state for public files and error pages.
type publicState struct {
	inner http.Handler // publicScoped, wrapped per path in scoped middleware

	rootMu sync.Mutex
	root   atomic.Pointer[os.Root] // public/, opened on first use

	errorPages map[int]http.Handler // by status; 0 for any
}

// site serves what is outside /api/: the static files and the pages of
// public/, the templates, and the error pages. It is made at start-up
// (site.setup), and reaches the rest of the server through what it is given.
type site struct {
	cfg       *Config
	log       *slog.Logger
	dirs      *appDirs
	pages     fileSource[*handlerFile] // the page files (the loader's)
	pub       publicState
	templates *tmplset.Set
	hot       *hotPath // the page tree of route parameters (routematch.go)
	// mw returns the path-scoped middleware of the When scopes, which
	// runs around a page (the current generation's, setupgen.go).
	mw func() *middlewareSet
}

// siteDeps is what the site is made with.
type siteDeps struct {
	cfg        *Config
	log        *slog.Logger
	dirs       *appDirs
	load       *loader
	hot        *hotPath
	mw         func() *middlewareSet
	errorPages map[int]http.Handler // App.ErrorPage's
}

// setup makes the page cache and the templates; called from App.setup.
func (a *site) setup(d siteDeps) error {
	a.cfg, a.log, a.dirs, a.hot, a.mw = d.cfg, d.log, d.dirs, d.hot, d.mw
	a.pub.errorPages = d.errorPages
	var err error
	a.pages, err = d.load.handlerSource(a.dirs.public)
	if err != nil {
		return err
	}
	a.pub.inner = http.HandlerFunc(a.publicScoped)
	a.templates = tmplset.New(a.dirs.template, a.log)
	return nil
}

// close releases what setupPublic and first use opened.
func (a *site) close() error {
	var errs []error
	if a.pages != nil {
		errs = append(errs, a.pages.Close())
	}
	if r := a.pub.root.Load(); r != nil {
		errs = append(errs, r.Close())
	}
	errs = append(errs, a.templates.Close())
	return errors.Join(errs...)
}

// publicPath is a request path outside /api, split into checked segments.
type publicPath struct {
	segs []string // unescaped, none empty
	dir  bool     // the path ends with "/" (the root always does)
}

// rel returns the slash-separated path below public/.
func (p publicPath) rel() string { return strings.Join(p.segs, "/") }

// parsePublicPath splits and checks the escaped request path; ok is false
// for any path that must not reach the file system (see the rules above).
// Each segment is unescaped on its own, so %2e, %2f and %5c are judged as
// the characters they encode.
func parsePublicPath(escaped string) (p publicPath, ok bool) {
	if escaped == "" || escaped[0] != '/' {
		return p, false
	}
	rest := escaped[1:]
	if rest == "" {
		return publicPath{dir: true}, true
	}
	if strings.HasSuffix(rest, "/") {
		p.dir = true
		rest = rest[:len(rest)-1]
	}
	n := strings.Count(rest, "/") + 1
	p.segs = make([]string, 0, n)
	for i := 0; i < n; i++ {
		seg := rest
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			seg, rest = rest[:j], rest[j+1:]
		}
		if strings.IndexByte(seg, '%') >= 0 {
			u, err := url.PathUnescape(seg)
			if err != nil {
				return p, false
			}
			seg = u
		}
		if !publicSegment(seg, i == 0) {
			return p, false
		}
		p.segs = append(p.segs, seg)
	}
	return p, true
}

// publicSegment reports whether one unescaped path segment may name a
// file or directory under public/.
func publicSegment(s string, first bool) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	if s[0] == '.' && !(first && s == ".well-known") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == '/' || c == '\\' {
			return false
		}
	}
	return !isGoName(s) && !isEditorLeftover(s)
}

// editorSuffixes end the names of editor backups, swap and temporary
// files, compared in any letter case.
var editorSuffixes = []string{"~", ".bak", ".orig", ".swp", ".tmp"}

// isEditorLeftover reports whether name is an editor's backup, swap or
// temporary file (notes.go~, notes.go.bak, notes.go.orig, .swp, .tmp, or
// Emacs's #notes.go#), which may hold a page's source.
func isEditorLeftover(name string) bool {
	if strings.HasPrefix(name, "#") {
		return true
	}
	for _, suf := range editorSuffixes {
		if len(name) >= len(suf) && strings.EqualFold(name[len(name)-len(suf):], suf) {
			return true
		}
	}
	return false
}

// isGoName reports whether name ends in ".go", in any letter case.
func isGoName(name string) bool {
	return len(name) >= 3 && strings.EqualFold(name[len(name)-3:], ".go")
}

// servePublic answers every path outside /api: checks the path, then runs
// the path-scoped middleware around the lookup of the page or file.
// OPTIONS, as for API endpoints, is answered without them.
func (a *site) servePublic(w http.ResponseWriter, r *http.Request) {
	pw := a.newPublicWriter(w, r)
	defer pw.finish()
	p, ok := parsePublicPath(r.URL.EscapedPath())
	if !ok {
		a.notFound(pw, r)
		return
	}
	mw := a.mw()
	if len(mw.scopes) == 0 || r.Method == http.MethodOptions {
		a.publicInner(pw, r, p)
		return
	}
	mw.scopedHandler("public", r.URL.Path, a.pub.inner).ServeHTTP(pw, r)
}

// publicScoped is publicInner behind path-scoped middleware.
func (a *site) publicScoped(w http.ResponseWriter, r *http.Request) {
	p, ok := parsePublicPath(r.URL.EscapedPath())
	if !ok {
		a.notFound(w, r)
		return
	}
	a.publicInner(w, r, p)
}

// publicInner serves the page or static file p names, or redirects to its
// canonical URL, or answers 404.
func (a *site) publicInner(w http.ResponseWriter, r *http.Request, p publicPath) {
	rel := p.rel()
	if !p.dir {
		f, fi, err := a.openStatic(rel)
		if err == nil {
			if fi.Mode().IsRegular() {
				a.serveStatic(w, r, f, fi)
				f.Close()
				return
			}
			f.Close()
		}
		if p.segs[len(p.segs)-1] == "index" && a.pageExists(rel+".go") {
			redirect(w, r, urlOf(p.segs[:len(p.segs)-1], true))
			return
		}
		if a.tryPage(w, r, rel+".go") {
			return
		}
		if err == nil && fi.IsDir() && (a.pageExists(rel+"/index.go") || a.staticExists(rel+"/index.html")) {
			redirect(w, r, urlOf(p.segs, true))
			return
		}
		if !a.tryParamPage(w, r, p) {
			a.notFound(w, r)
		}
		return
	}
	index := "index"
	if rel != "" {
		index = rel + "/index"
	}
	if a.tryPage(w, r, index+".go") {
		return
	}
	if f, fi, err := a.openStatic(index + ".html"); err == nil {
		defer f.Close()
		if fi.Mode().IsRegular() {
			a.serveStatic(w, r, f, fi)
			return
		}
	}
	if rel != "" && a.pageExists(rel+".go") {
		redirect(w, r, urlOf(p.segs, false))
		return
	}
	if !a.tryParamPage(w, r, p) {
		a.notFound(w, r)
	}
}

// pageFile returns the absolute path of the page file rel (slash-separated,
// below public/).
func (a *site) pageFile(rel string) string {
	return filepath.Join(a.dirs.public, filepath.FromSlash(rel))
}

// pageExists reports whether the page file rel exists (it may not
// compile). A page spelled as a route parameter ([name].go) exists only
// for its parameter route.
func (a *site) pageExists(rel string) bool {
	if hasPattern(rel) {
		return false
	}
	_, err := a.pages.Get(a.pageFile(rel))
	return !errors.Is(err, fs.ErrNotExist)
}

// tryPage serves the page file rel if it exists, and reports whether it
// did (an error response counts). A page spelled as a route parameter
// serves only by its parameter route (tryParamPage).
func (a *site) tryPage(w http.ResponseWriter, r *http.Request, rel string) bool {
	if hasPattern(rel) {
		return false
	}
	return a.servePage(w, r, rel, nil)
}

// servePage is tryPage for a page whose route has the given parameters.
func (a *site) servePage(w http.ResponseWriter, r *http.Request, rel string, params []routeParam) bool {
	f, err := a.pages.Get(a.pageFile(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		a.pageLoadError(w, r, err)
		return true
	}
	if r.Method == http.MethodOptions {
		w.Header().Set("Allow", f.allow)
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	fn, e := f.pick(r.Method)
	if e != nil {
		writeError(w, r, e)
		return true
	}
	st := stateOf(r)
	st.file, st.fn, st.params = f, fn, params
	f.serve.ServeHTTP(w, r)
	return true
}

// urlOf returns the escaped URL path of segs, with a trailing slash when
// dir is set.
func urlOf(segs []string, dir bool) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	if dir || len(segs) == 0 {
		b.WriteByte('/')
	}
	return b.String()
}

// redirect sends the client to the canonical URL path, keeping the query:
// 301 for GET and HEAD, 308 (the method kept) otherwise.
func redirect(w http.ResponseWriter, r *http.Request, path string) {
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	code := http.StatusPermanentRedirect
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		code = http.StatusMovedPermanently
	}
	w.Header().Set("Location", path)
	w.WriteHeader(code)
}

// notFound answers 404 not_found.
func (a *site) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, errorf(http.StatusNotFound, CodeNotFound, "nothing is served at %s", r.URL.Path))
}

// pageLoadError answers a page file that exists but does not load. The
// details (file:line:col, the message, in --dev the source lines) go to
// the log, and to the client only in dev mode.
func (a *site) pageLoadError(w http.ResponseWriter, r *http.Request, err error) {
	e := loadError(a.log, err, r.URL.Path)
	id := requestID(r)
	a.log.Error("page failed to load", "request_id", id, "path", r.URL.Path, "err", e.Hint)
	shown := &Error{Status: e.Status, Code: e.Code, Fields: map[string]any{"request_id": id},
		Hint: "the page could not be loaded; the server log has the details under request_id " + id}
	if a.cfg.Dev {
		shown.Hint, shown.Fields = e.Hint, e.Fields
		var ce *interp.Error
		if errors.As(err, &ce) {
			shown.compile = ce // for the source lines around it
		}
	}
	writeError(w, r, shown)
}

// findPage searches the page tree for segs (index as in routeSearch) and
// returns the page file's path below public/ and its parameters.
func (a *site) findPage(segs []string, index string) (string, []routeParam, bool) {
	t := a.hot.pubTree
	if t == nil {
		return "", nil, false
	}
	s := routeSearch{t: t, segs: segs, index: index, exact: notPattern}
	rel, ok := s.find("", 0)
	if !ok || len(s.params) == 0 { // an exact page: publicInner's own
		return "", nil, false
	}
	return rel, s.params, true
}

// tryParamPage serves the page a parameter route gives p, or redirects
// to its canonical URL, as publicInner does for exact pages, and reports
// whether it did.
func (a *site) tryParamPage(w http.ResponseWriter, r *http.Request, p publicPath) bool {
	n := len(p.segs)
	if p.dir {
		if rel, ps, ok := a.findPage(p.segs, "index"); ok {
			return a.servePage(w, r, rel, ps)
		}
		if _, _, ok := a.findPage(p.segs, ""); ok && n > 0 {
			redirect(w, r, urlOf(p.segs, false))
			return true
		}
		return false
	}
	if p.segs[n-1] == "index" {
		if _, _, ok := a.findPage(p.segs[:n-1], "index"); ok {
			redirect(w, r, urlOf(p.segs[:n-1], true))
			return true
		}
	}
	if rel, ps, ok := a.findPage(p.segs, ""); ok {
		return a.servePage(w, r, rel, ps)
	}
	if _, _, ok := a.findPage(p.segs, "index"); ok {
		redirect(w, r, urlOf(p.segs, true))
		return true
	}
	return false
}
