package host

import (
	"hash/maphash"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// apiRoute is a request path resolved to a handler file.
type apiRoute struct {
	module string // "device", "admin/users", or "" for /api/<name>
	action string
	file   string // absolute path under the api directory
	// params are the values of the parameters in the file's path
	// ([name] directories and files), in path order; nil for none.
	params []routeParam
}

// isAPIPath reports whether path is /api or lies below it.
func isAPIPath(path string) bool {
	return path == "/api" || strings.HasPrefix(path, "/api/")
}

// validName reports whether s is non-empty and made of [a-zA-Z0-9_-].
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// parseAPIPath splits the escaped path after "/api" into module and
// action. Each segment is unescaped on its own, so an encoded slash,
// backslash, dot or NUL is a character of its segment and fails the
// charset: nothing but [a-zA-Z0-9_-] segments ever reaches the file system.
func parseAPIPath(rest string) (module, action string, e *Error) {
	if rest == "" || rest == "/" {
		return "", "", errorf(http.StatusNotFound, CodeMethodNotFound,
			"no endpoint named: /api/<module>/<action> runs api/<module>/<action>.go")
	}
	if rest[0] != '/' {
		return "", "", errorf(http.StatusNotFound, CodeMethodNotFound, "no such endpoint")
	}
	if module, action, ok := plainAPIPath(rest[1:]); ok {
		return module, action, nil
	}
	return unescapeAPIPath(rest[1:])
}

// unescapeAPIPath is parseAPIPath for p, the path after "/api/", by
// unescaping each segment and checking it.
func unescapeAPIPath(p string) (module, action string, e *Error) {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil {
			u = "\x00"
		}
		segs[i] = u
	}
	last := len(segs) - 1
	for _, s := range segs[:last] {
		if !validName(s) {
			return "", "", errorf(http.StatusBadRequest, CodeInvalidModule,
				"the module path may hold only letters, digits, _, - and /, with no empty segment")
		}
	}
	if !validName(segs[last]) {
		return "", "", errorf(http.StatusBadRequest, CodeInvalidRequest,
			"the action name may hold only letters, digits, _ and -")
	}
	return strings.Join(segs[:last], "/"), segs[last], nil
}

// plainAPIPath is parseAPIPath's fast path for the common case, a path
// with nothing escaped: module and action are slices of p, with no
// allocation. It reports false when p needs the full parse.
func plainAPIPath(p string) (module, action string, ok bool) {
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		if !validName(p[start:i]) {
			return "", "", false
		}
		start = i + 1
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:], true
	}
	return "", p, true
}

// resolveAPI maps the request path to a handler file under dir.
func resolveAPI(dir string, r *http.Request) (apiRoute, *Error) {
	p := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(p, "/api")
	if !ok {
		return apiRoute{}, errorf(http.StatusNotFound, CodeMethodNotFound, "no such endpoint")
	}
	module, action, e := parseAPIPath(rest)
	if e != nil {
		return apiRoute{}, e
	}
	// Every segment passed validName (no dot, separator or empty one) and
	// dir is clean, so concatenation gives what filepath.Join would, without
	// its cleaning pass.
	sep := string(filepath.Separator)
	var file string
	if module != "" {
		file = dir + sep + filepath.FromSlash(module) + sep + action + ".go"
	} else {
		file = dir + sep + action + ".go"
	}
	return apiRoute{module: module, action: action, file: file}, nil
}

// routeCache remembers the routes of the paths seen last, in a table of
// routeCacheSize slots each holding the route of one path (with its
// parameters' values), the slot chosen by the path's hash: a request for
// a known path builds no file name and takes no lock, and the cache never
// holds more. Resolving depends on the path and on which files exist
// under api/ (route parameters), so an entry keeps the route tree's
// generation; a path whose slot holds another path's route, or a route of
// an older generation, is resolved again and takes the slot.
type routeCache struct {
	slots [routeCacheSize]atomic.Pointer[routeEntry]
}

// routeEntry is a slot's path, by its key (routeKey), and route.
type routeEntry struct {
	key string
	rt  apiRoute
	gen uint64 // the route tree's generation it was resolved in
}

const (
	routeCacheSize = 1024 // a power of two
	routeKeyMax    = 256  // longer paths are resolved each time
)

// routeSeed seeds the hash that picks a path's slot: random, so that no
// client can choose paths that share one.
var routeSeed = maphash.MakeSeed()

// resolve is resolveAPI with the route parameters of t (routematch.go;
// nil: none) through the cache. An entry serves while t's generation is
// the one it was resolved in: a file added or removed under api/ moves it
// on.
func (c *routeCache) resolve(dir string, t *routeTree, r *http.Request) (apiRoute, *Error) {
	p := routeKey(r.URL)
	gen := t.generation()
	slot := &c.slots[maphash.String(routeSeed, p)&(routeCacheSize-1)]
	if e := slot.Load(); e != nil && e.key == p && e.gen == gen {
		return e.rt, nil
	}
	rt, e := t.resolveAPI(dir, r)
	if e != nil || len(p) > routeKeyMax {
		return rt, e
	}
	slot.Store(&routeEntry{key: p, rt: rt, gen: gen})
	return rt, nil
}

// routeKey returns what the route cache knows u's path by: a string that
// determines its escaped path, as resolveAPI reads it. A path that came
// with no escaped form of its own (RawPath) and has no '%' is its own key:
// its escaped path is a function of it, and an escaped path equal to it
// has no '%' either, so it escapes nothing and is the same path. Any
// other path is known by its escaped form, which is then computed.
func routeKey(u *url.URL) string {
	if u.RawPath == "" && strings.IndexByte(u.Path, '%') < 0 {
		return u.Path
	}
	return u.EscapedPath()
}

// within reports whether path lies inside dir; both must be clean.
func within(dir, path string) bool {
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// routeParam is one parameter of a matched route: its name, from the file
// or directory name ([slug]), and its value, the percent-decoded URL
// segment (segments, joined by "/", for [...name]).
type routeParam struct{ name, value string }
