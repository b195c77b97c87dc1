package host

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

// Use adds global middleware, run on every request before any other.
func (a *App) Use(mw ...func(http.Handler) http.Handler) {
	a.mustConfigure()
	a.global = append(a.global, mw...)
}

// MiddlewareAlias registers a named middleware factory, for When, UseAlias
// and handler files' middleware variable; "name:a,b" calls the factory
// with "a", "b". Registering a name again replaces it, ready aliases
// included. A factory refuses bad arguments by returning an error (see
// MiddlewareFactory). An Echo middleware is adapted with EchoMiddleware.
//
// Every application has these ready aliases, built on Echo's middleware or
// the standard library:
//
//	request-id[:header]              puts zealgo's request id (X-Request-Id) on the request header too
//	cors[:origin,...]                CORS (Echo); any origin without arguments, credentials allowed with listed origins
//	body-limit:<size>                413 request_too_large past size: 512, 10K, 2M (Echo)
//	rate-limit:<per-second>[,burst]  429 too_many_requests, per client address (Echo; ClientIP: X-Forwarded-For only from trusted proxies)
//	basic-auth[:realm]               401 unless the credentials match Config.BasicAuth (WithBasicAuth)
//	                                 or ZEALGO_BASIC_AUTH="user:password,user2:password2" (Echo)
//	gzip[:level]                     gzip responses for clients that accept it (Echo)
//	timeout:<duration>               503 service_unavailable past the duration, and the request's
//	                                 context is done (http.TimeoutHandler: the response is held, not streamed)
//	secure-headers                   X-Content-Type-Options, X-Frame-Options, X-XSS-Protection,
//	                                 Referrer-Policy, and HSTS over TLS (Echo)
//	jwt:<alg>,env=<VAR>|file=<path>  401 unless the request bears a token signed with alg (HS256, RS256,
//	  [,claim=][,issuer=]            EdDSA) by the key in the environment variable or file; its claims
//	  [,audience=][,optional]        go to API.Claims and the auth hooks (jwt.go; golang-jwt/jwt/v5)
//
// CORS preflight: path-scoped middleware never runs for OPTIONS, so that
// guards cannot block it, with one exception: a cors alias in a When scope
// answers the preflight requests of its paths. Global cors (UseAlias) works
// everywhere; in a handler file's middleware list cors cannot see preflight.
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

// UseAlias adds global middleware by alias, as When does for a path:
// app.UseAlias("request-id", "cors:https://app.example", "secure-headers").
// It runs with the middleware given to Use, in registration order. An
// unknown alias or a bad argument is an error at start-up. A global cors
// answers CORS preflight requests everywhere; this is where it belongs.
func (a *App) UseAlias(specs ...string) {
	a.mustConfigure()
	for _, spec := range specs {
		u := &aliasUse{spec: spec}
		a.useAliases = append(a.useAliases, u)
		a.global = append(a.global, u.wrap)
	}
}

// aliasUse is global middleware given by alias; mw is resolved at start-up.
type aliasUse struct {
	spec string
	mw   func(http.Handler) http.Handler
}

func (u *aliasUse) wrap(next http.Handler) http.Handler { return u.mw(next) }

// setupMiddleware instantiates, at start-up, the middleware of the When
// scopes and of UseAlias.
func (a *App) setupMiddleware() error {
	for _, s := range a.scopes {
		var mws []func(http.Handler) http.Handler
		for _, spec := range s.aliases {
			mw, err := a.middleware(spec)
			if err != nil {
				return fmt.Errorf("%w (in When(%q))", err, s.prefix)
			}
			mws = append(mws, mw)
		}
		a.scopeMW = append(a.scopeMW, mws)
	}
	for _, u := range a.useAliases {
		mw, err := a.middleware(u.spec)
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
func (a *App) middleware(spec string) (mw func(http.Handler) http.Handler, err error) {
	name, argStr, hasArgs := strings.Cut(spec, ":")
	f, ok := a.aliases[name]
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
// OPTIONS answer, and reports whether it did. Other scoped middleware
// (guards) never runs for OPTIONS.
func (a *App) servePreflight(w http.ResponseWriter, r *http.Request, st *reqState) bool {
	if st.preflight {
		return false
	}
	var mws []func(http.Handler) http.Handler
	for i, s := range a.scopes {
		if !covers(s.prefix, r.URL.Path) {
			continue
		}
		for j, spec := range s.aliases {
			if name, _, _ := strings.Cut(spec, ":"); name == preflightAlias {
				mws = append(mws, a.scopeMW[i][j])
			}
		}
	}
	if len(mws) == 0 {
		return false
	}
	st.preflight = true
	chain(http.HandlerFunc(a.serveAPI), mws).ServeHTTP(w, r)
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
