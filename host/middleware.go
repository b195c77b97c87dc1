package host

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// MiddlewareFactory makes a middleware from the arguments written after
// its alias: "rate-limit:10" calls the factory of "rate-limit" with "10".
type MiddlewareFactory func(args ...string) func(http.Handler) http.Handler

// scope is path-scoped middleware registered with When.
type scope struct {
	prefix  string
	aliases []string
}

// Use adds global middleware, run on every request before any other.
func (a *App) Use(mw ...func(http.Handler) http.Handler) {
	a.mustConfigure()
	a.global = append(a.global, mw...)
}

// MiddlewareAlias registers a named middleware factory, for When and for
// handler files' middleware variable.
func (a *App) MiddlewareAlias(name string, factory MiddlewareFactory) {
	a.mustConfigure()
	a.aliases[name] = factory
}

// When runs the aliased middleware on every request whose path is prefix
// or lies below it on a segment boundary: "/api/admin" covers
// "/api/admin/users" but not "/api/administrators". Scopes run in the order
// they were registered, the first outermost, after global middleware and
// before a handler file's own. An unknown alias is an error at start-up.
func (a *App) When(prefix string, aliases ...string) {
	a.mustConfigure()
	a.scopes = append(a.scopes, scope{prefix: strings.TrimSuffix(prefix, "/"), aliases: aliases})
}

// middleware resolves an alias with its arguments, "name" or "name:a,b".
func (a *App) middleware(spec string) (func(http.Handler) http.Handler, error) {
	name, argStr, hasArgs := strings.Cut(spec, ":")
	f, ok := a.aliases[name]
	if !ok {
		return nil, fmt.Errorf("zealgo: unknown middleware alias %q", name)
	}
	var args []string
	if hasArgs {
		args = strings.Split(argStr, ",")
	}
	mw := f(args...)
	if mw == nil {
		return nil, fmt.Errorf("zealgo: middleware alias %q made no middleware", spec)
	}
	return mw, nil
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
func (a *App) scopedHandler(name, path string, inner http.Handler) http.Handler {
	if len(a.scopes) == 0 {
		return inner
	}
	var key strings.Builder
	key.WriteString(name)
	n := 0
	for i, s := range a.scopes {
		if covers(s.prefix, path) {
			key.WriteByte(',')
			key.WriteString(strconv.Itoa(i))
			n++
		}
	}
	if n == 0 {
		return inner
	}
	if h, ok := a.scoped.Load(key.String()); ok {
		return h.(http.Handler)
	}
	var mws []func(http.Handler) http.Handler
	for i, s := range a.scopes {
		if covers(s.prefix, path) {
			mws = append(mws, a.scopeMW[i]...)
		}
	}
	h := chain(inner, mws)
	a.scoped.Store(key.String(), h)
	return h
}
