package host

import (
	"net/http"
	"reflect"
	"strings"

	"github.com/zealgo/zealgo/interp"
)

// What an application registers before it starts: middleware, hooks,
// provided values, error pages. Start-up reads it (core.go);
// registering after start panics.

// Use adds global middleware, run on every request before any other.
func (a *App) Use(mw ...func(http.Handler) http.Handler) {
	a.mustConfigure()
	a.reg.global = append(a.reg.global, mw...)
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
	a.reg.aliases[name] = factory
}

// When runs the aliased middleware on every request whose path is prefix
// or lies below it on a segment boundary: "/api/admin" covers
// "/api/admin/users" but not "/api/administrators". Scopes run in the order
// they were registered, the first outermost, after global middleware and
// before a handler file's own. An unknown alias is an error at start-up.
func (a *App) When(prefix string, aliases ...string) {
	a.mustConfigure()
	a.reg.scopes = append(a.reg.scopes, scope{prefix: strings.TrimSuffix(prefix, "/"), aliases: aliases})
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
		a.reg.useAliases = append(a.reg.useAliases, u)
		a.reg.global = append(a.reg.global, u.wrap)
	}
}

// AuthChecker sets the callback behind API.IsAuthenticated. It is called
// at request time, on every call. Nil clears it: nobody is authenticated.
// Set it before the application starts.
func (a *App) AuthChecker(f func(*RequestContext) bool) { a.mustConfigure(); a.reg.hooks.auth = f }

// AdminChecker sets the callback behind API.IsAdmin. It is called at
// request time, on every call. Nil clears it: nobody is an admin. Set it
// before the application starts.
func (a *App) AdminChecker(f func(*RequestContext) bool) { a.mustConfigure(); a.reg.hooks.admin = f }

// UsernameProvider sets the callback behind API.Username. It is called at
// request time, on every call. Nil clears it. Set it before the
// application starts.
func (a *App) UsernameProvider(f func(*RequestContext) (string, bool)) {
	a.mustConfigure()
	a.reg.hooks.username = f
}

// AllowOrigins lets a front end served from these origins
// (scheme://host[:port]: "https://app.example", "http://localhost:5173")
// call the application from a browser, with cookies: CORS requests from
// them, preflight included, are answered before any other middleware
// (credentials allowed, the requested headers and the usual methods
// allowed, X-Request-Id, Location, Retry-After and Allow exposed, the
// preflight kept 10 minutes), and the cross-origin protection trusts them
// for unsafe methods. It adds to the serve flag --allow-origin
// (Config.AllowOrigins). An origin that is no origin is an error at
// start-up. Allowed in setup.go.
func (a *App) AllowOrigins(origins ...string) {
	a.mustConfigure()
	a.reg.origins = append(a.reg.origins, origins...)
}

// ErrorFormatter sets f to shape the body of every error the framework
// answers under /api/ (400, 404, 405, 408, 413, 415, 422 from API.Bind,
// 429, 500, 503, and an *Error a handler returns): f receives the request
// and the error (Status, Code, Hint, and Fields such as the failing
// fields of API.Bind under "fields") and returns the value sent as JSON
// with e.Status, e.g. RealWorld's
//
//	app.ErrorFormatter(func(r *http.Request, e *host.Error) any {
//		return map[string]any{"errors": map[string][]string{"body": {e.Hint}}}
//	})
//
// A nil result, a panic of f or a value that does not encode sends the
// usual envelope {"error": code, "hint": ...}. The hint of a 500 never
// holds a stack or source, only the request id. Nil restores the envelope.
// Allowed in setup.go.
func (a *App) ErrorFormatter(f func(r *http.Request, e *Error) any) {
	a.mustConfigure()
	a.reg.errorFormat = f
}

// ErrorPage sets h to render the HTML error page for status outside /api/;
// status 0 sets the page for every status without a page of its own. The
// response status is preset to the error's (h may change it by calling
// WriteHeader first); PageError(r) returns the error. Clients that prefer
// JSON still get the JSON envelope. A nil h restores the built-in page.
func (a *App) ErrorPage(status int, h http.Handler) {
	a.reg.refuse("ErrorPage")
	a.mustConfigure()
	if a.reg.errorPages == nil {
		a.reg.errorPages = map[int]http.Handler{}
	}
	if h == nil {
		delete(a.reg.errorPages, status)
		return
	}
	a.reg.errorPages[status] = h
}

// ErrorTemplate renders template/<name>.html as the HTML error page for
// status (0: every status without a page of its own), with a map holding
// Status (int), Title (the status text), Code, Hint, RequestID and Path.
// If the template fails, the built-in page is sent and the failure logged.
func (a *App) ErrorTemplate(status int, name string) {
	a.reg.refuse("ErrorTemplate")
	a.ErrorPage(status, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := PageError(r)
		html, err := a.RenderHTML(name, errorData(e, r))
		if err != nil {
			a.Logger().Error("error page template failed", "template", name, "err", err)
			html = defaultErrorHTML(e, r, nil)
		}
		w.Header().Set("Content-Type", contentHTML)
		_, _ = w.Write([]byte(html))
	}))
}

// OnStart registers f to run once when the application starts (the first
// Handler, Serve or serve command), after the command-line flags are
// applied and the root and data directories resolved, before the first
// request: the place to open a database under Config().DataDir. An error
// stops the start-up. Hooks run in registration order. The check and
// routes commands do not start the application and run no hook.
//
// Hooks run in the server and again in each task worker process, so that
// what they open is there for tasks too; a hook that starts background
// work meant to run once (a scheduler, a cleaner) checks IsTaskWorker.
func (a *App) OnStart(f func(*App) error) {
	a.reg.refuse("OnStart")
	a.mustConfigure()
	a.reg.lifecycle.mu.Lock()
	defer a.reg.lifecycle.mu.Unlock()
	a.reg.lifecycle.onStart = append(a.reg.lifecycle.onStart, f)
}

// OnStop registers f to run once when the application closes (after a
// graceful shutdown, or Close), in reverse registration order: the place
// to close a database opened by OnStart. A task worker runs the hooks
// too, when it exits.
func (a *App) OnStop(f func()) {
	a.reg.refuse("OnStop")
	a.mustConfigure()
	a.reg.lifecycle.mu.Lock()
	defer a.reg.lifecycle.mu.Unlock()
	a.reg.lifecycle.onStop = append(a.reg.lifecycle.onStop, f)
}

// Symbols adds symbol tables, generated by `yaegi extract`, of packages that
// handler files may import. The host package's own table is in the
// symbols package: app.Symbols(symbols.Symbols).
func (a *App) Symbols(s interp.Exports) {
	a.reg.refuse("Symbols")
	a.mustConfigure()
	a.symbols = append(a.symbols, s)
}

// OnTaskFinish sets the callback that receives each task's result or
// error in the server process. The default logs it. Calls come one at a
// time, in the order tasks finish, from a goroutine of their own; result
// is the task's return value as JSON decodes it, except that a whole
// number that fits arrives as an int64 (other numbers as float64); err is
// a *TaskError. On NATS JetStream (Config.NATS) the end is acknowledged
// when f returns, and f runs on the goroutine that reads the ends: an end
// that f was given when the process died is given again after its
// restart, so f should be idempotent (keyed by id), and quick.
func (a *App) OnTaskFinish(f func(id int64, result any, err error)) {
	a.reg.refuse("OnTaskFinish")
	a.mustConfigure()
	a.reg.onTaskFinish = f
}

// Provide makes v injectable: a handler parameter of exactly v's type
// receives v (e.g. the application's store, as *store.Store). Handler files
// can only name the type if its package's symbols are registered with
// Symbols. Call it before the application starts or inside an OnStart
// hook (the place for a value built on App.DB); later it panics.
func (a *App) Provide(v any) {
	checkProvide(v, a.started, a.reg.lifecycle.isRunning())
	if a.reg.provided == nil {
		a.reg.provided = map[reflect.Type]reflect.Value{}
	}
	a.reg.provided[reflect.TypeOf(v)] = reflect.ValueOf(v)
}

// Provided returns the value given to Provide with the same type as
// example (a nil pointer of the type will do), and whether there is one.
func (a *App) Provided(example any) (any, bool) {
	v, ok := regOf(a).provided[reflect.TypeOf(example)]
	if !ok {
		return nil, false
	}
	return v.Interface(), true
}
