package host

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/zealgo/zealgo/internal/routepat"
)

// Resolving route parameters (docs/routing.md). At each level of the
// path an exact name wins over [name], which wins over [...name]; when
// the exact directory leads to no file, its [name] sibling is tried, then
// the level's [...name].go. A path that no parameter serves resolves as it
// did without them (resolveAPI, the public rules of public.go), so that
// its answer, charset errors included, is unchanged.

// routeSearch is one search of a tree for the file that serves segs.
type routeSearch struct {
	t    *routeTree
	segs []string // the path's segments, percent-decoded
	// index is the file looked up in the directory segs names ("index"
	// for a page path ending in "/"); "" when the last segment names the
	// file.
	index string
	// exact reports whether a segment may name an entry as it is.
	exact    func(string) bool
	params   []routeParam // of the search's current branch
	conflict string       // the first conflict met (routeDir.conflict)
	visits   int          // directories visited (maxRouteVisits)
}

// maxRouteVisits bounds the directories one search visits. A search
// visits at most two directories a level (the exact one and [name]), but
// symlinks inside the root may make loops ([a] -> .), through which
// backtracking would branch at every segment.
const maxRouteVisits = 256

// find searches below rel from segment i and returns the file's path
// below the tree's root, ".go" included.
func (s *routeSearch) find(rel string, i int) (string, bool) {
	if s.visits++; s.visits > maxRouteVisits {
		return "", false
	}
	d := s.t.list(rel)
	params := d.conflict == ""
	if !params && s.conflict == "" {
		s.conflict = d.conflict
	}
	n := len(s.segs) - i
	if n == 0 {
		return joinRel(rel, s.index+".go"), s.index != "" && d.files[s.index]
	}
	seg := s.segs[i]
	if n == 1 && s.index == "" {
		switch {
		case s.exact(seg) && d.files[seg]:
			return joinRel(rel, seg+".go"), true
		case params && d.paramFile && paramValue(seg):
			s.params = append(s.params, routeParam{d.param, seg})
			return joinRel(rel, "["+d.param+"].go"), true
		case params && d.rest != "" && paramValue(seg):
			s.params = append(s.params, routeParam{d.rest, seg})
			return joinRel(rel, "[..."+d.rest+"].go"), true
		}
		return "", false
	}
	if s.exact(seg) && d.dirs[seg] {
		if f, ok := s.find(joinRel(rel, seg), i+1); ok {
			return f, true
		}
	}
	if params && d.paramDir && paramValue(seg) {
		mark := len(s.params)
		s.params = append(s.params, routeParam{d.param, seg})
		if f, ok := s.find(joinRel(rel, "["+d.param+"]"), i+1); ok {
			return f, true
		}
		s.params = s.params[:mark]
	}
	if params && d.rest != "" && s.index == "" && allParamValues(s.segs[i:]) {
		s.params = append(s.params, routeParam{d.rest, strings.Join(s.segs[i:], "/")})
		return joinRel(rel, "[..."+d.rest+"].go"), true
	}
	return "", false
}

// joinRel joins a slash-separated path below a root and a name.
func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// paramValue reports whether a decoded segment may be a parameter's
// value: not empty, ".", "..", and holding no "/" (an encoded one) or NUL.
func paramValue(s string) bool {
	return s != "" && s != "." && s != ".." && strings.IndexByte(s, '/') < 0 && strings.IndexByte(s, 0) < 0
}

// allParamValues reports whether every segment may be a value.
func allParamValues(segs []string) bool {
	for _, s := range segs {
		if !paramValue(s) {
			return false
		}
	}
	return true
}

// notPattern reports whether a page path segment may name an entry as it
// is: not when it is spelled as a parameter, whose file serves by its
// parameter only.
func notPattern(s string) bool {
	_, _, ok := routepat.Parse(s)
	return !ok
}

// hasPattern reports whether an element of the slash-separated rel is
// spelled as a parameter ([name], [...name], with or without ".go").
func hasPattern(rel string) bool {
	if strings.IndexByte(rel, '[') < 0 {
		return false
	}
	for _, e := range strings.Split(rel, "/") {
		if !notPattern(strings.TrimSuffix(e, ".go")) {
			return true
		}
	}
	return false
}

// resolveAPI is the package's resolveAPI with the tree's route
// parameters: the exact file when there is one, else the file a
// parameter route gives; a path no parameter serves resolves as
// resolveAPI resolves it. A nil tree has no parameters.
func (t *routeTree) resolveAPI(dir string, r *http.Request) (apiRoute, *Error) {
	rt, e := resolveAPI(dir, r)
	if t == nil {
		return rt, e
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/")
	if !ok || rest == "" {
		return rt, e
	}
	s := routeSearch{t: t, segs: decodeSegments(rest), exact: validName}
	rel, found := s.find("", 0)
	switch {
	case found && len(s.params) == 0: // the exact file, as resolveAPI gave it
		return rt, e
	case found:
		return paramRoute(dir, rel, s.params), nil
	case s.conflict != "":
		return apiRoute{}, errorf(http.StatusInternalServerError, CodeRouteConflict, "%s", s.conflict)
	}
	return rt, e
}

// decodeSegments splits an escaped path and decodes each segment on its
// own; a segment that does not decode becomes "\x00", which neither names
// a file nor is a parameter's value.
func decodeSegments(escaped string) []string {
	segs := strings.Split(escaped, "/")
	for i, s := range segs {
		if strings.IndexByte(s, '%') < 0 {
			continue
		}
		u, err := url.PathUnescape(s)
		if err != nil {
			u = "\x00"
		}
		segs[i] = u
	}
	return segs
}

// paramRoute returns the route of the file rel (below dir, ".go"
// included) with its parameters.
func paramRoute(dir, rel string, params []routeParam) apiRoute {
	stem := strings.TrimSuffix(rel, ".go")
	rt := apiRoute{action: stem, file: dir + string(filepath.Separator) + filepath.FromSlash(rel),
		params: append([]routeParam(nil), params...)}
	if i := strings.LastIndexByte(stem, '/'); i >= 0 {
		rt.module, rt.action = stem[:i], stem[i+1:]
	}
	return rt
}

// routeURL returns how `zealgo routes` prints the URL of a file's path
// below its root (no ".go"): its parameters as {name} and {name...}.
func routeURL(rel string) string {
	if strings.IndexByte(rel, '[') < 0 {
		return rel
	}
	elems := strings.Split(rel, "/")
	for i, e := range elems {
		elems[i] = routepat.Pattern(e)
	}
	return strings.Join(elems, "/")
}
