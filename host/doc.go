// Package host is the zealgo framework: the application, the dispatcher
// handed to handler files, the universal return contract, routing,
// middleware, authentication hooks and the command line.
//
// A Go file dropped under api/ becomes an endpoint with no registration:
// api/device/list.go serves /api/device/list. It is interpreted by Yaegi,
// compiled lazily on its first request and recompiled into a fresh
// interpreter when it changes on disk:
//
//	//go:build ignore
//
//	package main
//
//	import "github.com/zealgo/zealgo/host"
//
//	var list = func(api *host.API) any {
//		return map[string]any{"method": api.Method(), "input": api.Input}
//	}
//
// A func named after the file serves every method (mode 1); funcs named
// get, post, put, delete and patch serve one method each (mode 2).
// Parameters are injected by type; results follow the return contract: an
// int is a status, a string HTML, a map, slice or struct JSON, a
// func(yield func(string) bool) or <-chan string a stream, an http.Handler
// or *http.Response is used directly, and a non-nil error is a 500.
//
// An application is a small main:
//
//	app := host.New()
//	app.Symbols(symbols.Symbols) // lets handler files import host
//	host.Main(app)               // serve, check, routes
//
// Echo serves HTTP behind this package; its public API speaks net/http.
//
// # How a request flows
//
// Start-up (App.setup, app.go) builds, once, the running server (core,
// core.go): its components (ops, NATS, database, edge, live hub,
// middleware set, sessions, loader, site, tasks), each made from what it
// depends on, and the handler chain. The request path calls the
// components; the edge (edge.go) and the live hub (live_hub.go,
// websocket.go, sse.go) call nothing of it back: what they need of it
// comes through their setup. The command line (cli*.go) sits on top:
// Main and App.Run are its entries, and nothing else reaches it. A
// request then passes through these steps, outermost first:
//
//  0. Operations (opsState.root, ops.go): the health checks are answered here
//     (health.go) and go no further; with tracing on, the request gets its
//     span (tracing.go). When the request ends, observe (ops.go), deferred
//     by the outermost layer, counts it (metrics.go), writes its access
//     record (accesslog.go) and names its span after the file that
//     answered.
//  1. The outermost layer (entry and outer, dispatch.go) takes the
//     request's state from a pool (state.go): one object that is also the
//     request's context and holds its id (X-Request-Id), its outermost
//     response, the handler call's API, Request and Response and its
//     execution limit, so that the framework allocates next to nothing
//     per request; the state goes back to the pool when the request ends.
//     A GET or HEAD of a static file, when no global or path-scoped
//     middleware could answer it, is served here (site.staticFile,
//     static.go, opens it; serveStaticFast, dispatch.go) and goes no further: no router, no limit, no
//     interpreter, and its bytes reach the connection's ReadFrom
//     (sendfile). Every other request runs under the execution limit
//     (serveLimited, exectime.go: its handler on the request's own
//     goroutine, the state's timer answering 503 and closing the
//     connection when it fires first), gets its frame headers and body and
//     write deadlines (edgeState.apply, edge.go), and has a panic anywhere
//     below turned into a 500 internal_error. Then the current generation
//     of what the compiled main and setup.go registered (setupgen.go,
//     setupfile.go) takes over: CORS for the allowed origins (cors.go), and
//     the cross-origin protection (edgeState.crossOrigin, edge.go) refuses
//     unsafe requests that browsers send from other origins.
//  2. The global middleware (App.Use, App.UseAlias; middleware.go), each
//     instantiated once per generation (newGeneration, setupgen.go).
//  3. The Echo router (newEcho, core.go) sends /api and /api/... to serveAPI
//     and every other path to servePublic; a method it does not route is
//     answered by echoError (dispatch.go).
//  4. serveAPI (dispatch.go) resolves the URL to a file under api/
//     (resolveAPI, route.go, remembered per path) and answers OPTIONS itself;
//     servePublic (public.go) checks the path, serves static files
//     (static.go) and pages (the site, public.go), and wraps the response
//     in a publicWriter, the request's error writer outside /api/
//     (errorpage.go). A path no exact file serves may be served by a
//     [name] or [...name] file (route parameters: routematch.go, over the
//     route trees of routetree.go).
//  5. The path-scoped middleware of the When scopes that cover the path
//     (middlewareSet.scopedHandler, middleware.go).
//  6. Load (loadAPI, load.go; tryPage, public.go): the compiled file comes
//     from a cache that compiles it on first use and again after it
//     changes, or, in a binary made by `zealgo build`, from the compiled
//     registry (source.go, compiled.go); a file that does not load answers
//     with its error. pick
//     (handler.go) chooses the func for the method.
//  7. The file's own middleware (var middleware), resolved when the file
//     loads (loader.analyze, handler.go) and chained around invoke
//     (buildHandlers, load.go).
//  8. invoke (dispatch.go) prepares the API, Request and Response of the
//     request's state and the request's input (input.go: parsed before
//     the call for a file that names a field holding it, else read on
//     first use, or never), and calls the func: the common shapes through
//     a type assertion made when the file loads, others with their
//     parameters injected by type (handler.go).
//  9. The return contract (respond and writeResult, contract.go) turns
//     what the func returned into writes on the Response (response.go),
//     which buffers them and sends them when the call ends; sessions save
//     just before the header goes out (session.go).
//
// An error at any step is written by writeError (errorpage.go) in the format
// chosen when the request was routed: the JSON envelope under /api/, an
// HTML error page or the envelope outside it, as the Accept header
// prefers (negotiate.go).
package host
