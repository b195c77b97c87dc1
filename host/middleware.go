package host

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// MiddlewareFactory makes a middleware from the arguments written after
// its alias: "rate-limit:10" calls the factory of "rate-limit" with "10".
// It returns an error to refuse its arguments: at start-up (When,
// UseAlias) the application then fails to start with an error naming the
// alias and the arguments; in a handler file's middleware list the file
// answers 500 unknown_middleware with the same text.
//
//	app.MiddlewareAlias("role", func(args ...string) (func(http.Handler) http.Handler, error) {
//		if len(args) != 1 {
//			return nil, fmt.Errorf("role takes one argument, the role, got %d", len(args))
//		}
//		return requireRole(args[0]), nil
//	})
type MiddlewareFactory func(args ...string) (func(http.Handler) http.Handler, error)

// scope is path-scoped middleware registered with When.
type scope struct {
	prefix  string
	aliases []string
}

// aliasMap holds the middleware aliases by name (MiddlewareAlias).
type aliasMap map[string]MiddlewareFactory

// middlewareSet is the path-scoped middleware of the When scopes,
// instantiated once at start-up (setup), and the chains built from it.
type middlewareSet struct {
	scopes  []scope
	scopeMW [][]func(http.Handler) http.Handler // per scope
	scoped  sync.Map                            // handler name and scope set -> http.Handler
}

// aliasUse is global middleware given by alias; mw is resolved at start-up.
type aliasUse struct {
	spec string
	mw   func(http.Handler) http.Handler
}

func (u *aliasUse) wrap(next http.Handler) http.Handler { return u.mw(next) }

// setup instantiates, at start-up, the middleware of the When
// scopes and of UseAlias.
func (m *middlewareSet) setup(scopes []scope, uses []*aliasUse, aliases aliasMap) error {
	m.scopes = scopes
	for _, s := range scopes {
		var mws []func(http.Handler) http.Handler
		for _, spec := range s.aliases {
			mw, err := aliases.middleware(spec)
			if err != nil {
				return fmt.Errorf("%w (in When(%q))", err, s.prefix)
			}
			mws = append(mws, mw)
		}
		m.scopeMW = append(m.scopeMW, mws)
	}
	for _, u := range uses {
		mw, err := aliases.middleware(u.spec)
		if err != nil {
			return fmt.Errorf("%w (in UseAlias)", err)
		}
		u.mw = mw
	}
	return nil
}

// middleware resolves an alias with its arguments, "name" or "name:a,b".
// The error names the alias and its arguments. A factory that panics
// instead of returning an error is reported the same way.
func (aliases aliasMap) middleware(spec string) (mw func(http.Handler) http.Handler, err error) {
	name, argStr, hasArgs := strings.Cut(spec, ":")
	f, ok := aliases[name]
	if !ok {
		return nil, fmt.Errorf("zealgo: unknown middleware alias %q", name)
	}
	var args []string
	if hasArgs {
		args = strings.Split(argStr, ",")
	}
	defer func() {
		if p := recover(); p != nil {
			mw, err = nil, fmt.Errorf("zealgo: middleware %q: the factory panicked: %v", spec, p)
		}
	}()
	mw, err = f(args...)
	if err != nil {
		return nil, fmt.Errorf("zealgo: middleware %q: %w", spec, err)
	}
	if mw == nil {
		return nil, fmt.Errorf("zealgo: middleware alias %q made no middleware", spec)
	}
	return mw, nil
}

// preflightAlias is the alias whose middleware, in a When scope, also runs
// for OPTIONS requests, which other path-scoped middleware never sees.
const preflightAlias = "cors"

// servePreflight answers an OPTIONS request through the cors middleware
// of the When scopes that cover its path, around the dispatcher's own
// OPTIONS answer (api: serveAPI), and reports whether it did. Other scoped middleware
// (guards) never runs for OPTIONS.
func (m *middlewareSet) servePreflight(w http.ResponseWriter, r *http.Request, st *reqState, api http.Handler) bool {
	if st.preflight {
		return false
	}
	var mws []func(http.Handler) http.Handler
	for i, s := range m.scopes {
		if !covers(s.prefix, r.URL.Path) {
			continue
		}
		for j, spec := range s.aliases {
			if name, _, _ := strings.Cut(spec, ":"); name == preflightAlias {
				mws = append(mws, m.scopeMW[i][j])
			}
		}
	}
	if len(mws) == 0 {
		return false
	}
	st.preflight = true
	chain(api, mws).ServeHTTP(w, r)
	return true
}

// chain wraps h in mws, the first outermost.
func chain(h http.Handler, mws []func(http.Handler) http.Handler) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// covers reports whether prefix covers path on a segment boundary.
func covers(prefix, path string) bool {
	if prefix == "" {
		return true
	}
	return path == prefix || strings.HasPrefix(path, prefix) && path[len(prefix)] == '/'
}

// scopedHandler returns inner wrapped in the path-scoped middleware that
// covers path. name identifies inner; chains are built once per inner and
// set of matching scopes, from middleware instantiated once at start-up.
func (m *middlewareSet) scopedHandler(name, path string, inner http.Handler) http.Handler {
	if len(m.scopes) == 0 {
		return inner
	}
	var key strings.Builder
	key.WriteString(name)
	n := 0
	for i, s := range m.scopes {
		if covers(s.prefix, path) {
			key.WriteByte(',')
			key.WriteString(strconv.Itoa(i))
			n++
		}
	}
	if n == 0 {
		return inner
	}
	if h, ok := m.scoped.Load(key.String()); ok {
		return h.(http.Handler)
	}
	var mws []func(http.Handler) http.Handler
	for i, s := range m.scopes {
		if covers(s.prefix, path) {
			mws = append(mws, m.scopeMW[i]...)
		}
	}
	h := chain(inner, mws)
	m.scoped.Store(key.String(), h)
	return h
}
