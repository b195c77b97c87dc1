package host

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v5"
)

// Static files: any file under public/ that is not a page is sent by
// http.ServeContent, the function Echo's static handler (echo.Static,
// Context.File) serves files with, so the headers are the ones Echo gives:
// Content-Type from the extension (sniffed when there is none),
// Last-Modified with If-Modified-Since and If-Unmodified-Since, Range and
// If-Range, and HEAD. zealgo adds a strong ETag built from the size and
// modification time (If-None-Match answers 304) and
// X-Content-Type-Options: nosniff. Files are opened through an os.Root, so
// that no symlink leads out of public/; static files never reach the
// interpreter. They answer GET and HEAD (OPTIONS lists them); other
// methods are 405.

// staticAllow is the Allow header of a static file.
const staticAllow = "GET, HEAD, OPTIONS"

// publicRoot returns public/ opened as an os.Root, or nil if it cannot be
// opened (no public/ yet: it is tried again on the next request).
func (a *site) publicRoot() *os.Root {
	if r := a.pub.root.Load(); r != nil {
		return r
	}
	a.pub.rootMu.Lock()
	defer a.pub.rootMu.Unlock()
	if r := a.pub.root.Load(); r != nil {
		return r
	}
	r, err := os.OpenRoot(a.dirs.public)
	if err != nil {
		return nil
	}
	a.pub.root.Store(r)
	return r
}

// errStaticHidden is a file that exists but must not be served.
var errStaticHidden = fmt.Errorf("zealgo: not a servable static file: %w", fs.ErrNotExist)

// openStatic opens the file or directory rel (slash-separated, checked by
// parsePublicPath) below public/. A symlink as the last component is
// followed only when its target, inside public/, is neither a .go file nor
// below a dot-named segment.
func (a *site) openStatic(rel string) (*os.File, fs.FileInfo, error) {
	root := a.publicRoot()
	if root == nil {
		return nil, nil, fs.ErrNotExist
	}
	name := rel
	if name == "" {
		name = "."
	}
	full := filepath.Join(a.dirs.public, filepath.FromSlash(rel))
	if li, err := os.Lstat(full); err != nil {
		return nil, nil, err
	} else if li.Mode()&fs.ModeSymlink != 0 && !a.servableTarget(full) {
		return nil, nil, errStaticHidden
	}
	f, err := root.Open(filepath.FromSlash(name))
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// servableTarget reports whether the symlink full resolves to a path
// inside public/ that could be asked for directly.
func (a *site) servableTarget(full string) bool {
	real, err := filepath.EvalSymlinks(full)
	if err != nil || !within(a.dirs.public, real) {
		return false
	}
	rel, err := filepath.Rel(a.dirs.public, real)
	if err != nil {
		return false
	}
	for i, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if !publicSegment(seg, i == 0) {
			return false
		}
	}
	return true
}

// staticExists reports whether rel is a regular file that openStatic
// would serve.
func (a *site) staticExists(rel string) bool {
	f, fi, err := a.openStatic(rel)
	if err != nil {
		return false
	}
	f.Close()
	return fi.Mode().IsRegular()
}

// serveStatic sends the open regular file f.
func (a *site) serveStatic(w http.ResponseWriter, r *http.Request, f *os.File, fi fs.FileInfo) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		w.Header().Set("Allow", staticAllow)
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		e := errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "%s is a static file; it serves %s", r.URL.Path, staticAllow)
		e.Header = http.Header{"Allow": {staticAllow}}
		writeError(w, r, e)
		return
	}
	h := w.Header()
	if _, ok := h["Etag"]; !ok {
		h["Etag"] = []string{etag(fi)}
	}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	liftWriteDeadline(w, r, fi)
	http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
}

// largeFile is the size from which a static file is sent with no write
// deadline: a slow client may take longer than Config.WriteTimeout to
// receive it, and sendfile(2) leaves no writes to move the deadline at.
const largeFile = 1 << 20

// liftWriteDeadline lifts the write deadline that the server set when the
// request came in, for a file of largeFile or more.
func liftWriteDeadline(w http.ResponseWriter, r *http.Request, fi fs.FileInfo) {
	if fi.Size() < largeFile {
		return
	}
	if st := stateOf(r); st != nil && st.srvDeadline {
		if dl := deadlinesOf(w); dl != nil {
			_ = dl.SetWriteDeadline(time.Time{})
		}
	}
}

// etag returns a strong entity tag from the size and modification time,
// as nginx does.
func etag(fi fs.FileInfo) string {
	b := make([]byte, 0, 40)
	b = append(b, '"')
	b = strconv.AppendInt(b, fi.ModTime().UnixNano(), 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, fi.Size(), 16)
	b = append(b, '"')
	return string(b)
}

// staticFile opens, for the dispatcher's fast path (serveStaticFast,
// dispatch.go), the static file a GET or HEAD asks for, into st
// (st.static, which the caller closes): only when no When scope covers
// the path and its last segment has a dot, as files have (pages and
// directories take the full path, publicInner). It reports whether it
// opened one.
func (a *site) staticFile(st *reqState, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead || isAPIPath(r.URL.Path) {
		return false
	}
	esc := r.URL.EscapedPath()
	if strings.IndexByte(esc[strings.LastIndexByte(esc, '/')+1:], '.') < 0 {
		return false
	}
	for _, s := range a.mw().scopes {
		if covers(s.prefix, r.URL.Path) {
			return false
		}
	}
	p, ok := parsePublicPath(esc)
	if !ok || p.dir {
		return false
	}
	f, fi, err := a.openStatic(p.rel())
	if err != nil {
		return false
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return false
	}
	st.static, st.staticInfo = f, fi
	return true
}

// staticHandler serves the file staticFile opened.
type staticHandler site

func (h *staticHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a, st := (*site)(h), stateOf(r)
	st.pw = publicWriter{ResponseWriter: fileWriter{st.res}, app: a, r: r}
	st.pages = &st.pw
	a.serveStatic(&st.pw, r, st.static, st.staticInfo)
	st.pw.finish()
}

// fileWriter is the outermost response with ReadFrom: a file's bytes go
// to the connection's own ReadFrom, which sends them with sendfile(2),
// and count in the response's size.
type fileWriter struct{ *echo.Response }

// ReadFrom sends the header, then copies src with the ReadFrom of the
// writer below, when it has one.
func (fw fileWriter) ReadFrom(src io.Reader) (int64, error) {
	res := fw.Response
	if !res.Committed {
		res.WriteHeader(http.StatusOK)
	}
	rf, ok := res.ResponseWriter.(io.ReaderFrom)
	if !ok {
		return io.Copy(res, src)
	}
	n, err := rf.ReadFrom(src)
	res.Size += n
	return n, err
}
