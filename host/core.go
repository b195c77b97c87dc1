package host

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/zealgo/zealgo/internal/sessionstore"
)

// core is the running server: the components that starting the
// application builds, once (start), from its configuration and what was
// registered on it, and the request path that runs through them
// (dispatch.go). New makes it empty, so that what is asked of a component
// before start (the metrics registry, the database pool, a task) finds
// its zero value. Adding a subsystem means its own files and a line in
// start.
type core struct {
	app  *App
	cfg  Config // the App's, as it was at start-up
	log  *slog.Logger
	dirs appDirs

	ops      opsState              // health, metrics, tracing, access log (ops.go)
	nats     natsState             // NATS JetStream, when used (nats.go)
	db       dbState               // the database pool (db.go)
	edge     edgeState             // time limits, frame headers, cross-origin, proxies (edge.go)
	setup    setupState            // what the compiled main and setup.go registered (setupfile.go)
	sessions *sessionstore.Manager // the session engine (session_config.go)
	load     *loader               // compiles and analyzes the files (loader.go)
	api      fileSource[*handlerFile]
	site     site        // public/: pages, static files, templates, error pages (public.go)
	tasks    tasks       // the task engine (task.go)
	live     liveHub     // WebSockets, streams and rooms (live_hub.go)
	shared   sharedState // App.KV and publish/subscribe (shared.go)

	echo *echo.Echo
	root http.Handler // outermost layer, global middleware, then echo
	hot  hotPath      // what the request path prepares once (state.go)
}

// rtOf returns a's running server (nil for an App that New did not make).
//
// The types a handler file names (API, App, Request, Response,
// RequestContext, Session, KV, WebSocket, SSE, Server, Error) hold the
// running server's state as values of type any, read back through rtOf
// and its like (sharedOf, hubOf, httpOf, childOf), for the compile cost
// of every handler file. zealgo build compiles each handler file in a
// package of its own, and the compiler reads the whole type of what a
// package names: every field and method signature, exported or not, of
// every named type it reaches, and compiles again (as duplicates the
// linker drops) each generic instantiation it meets. Through a field
// typed *core, a handler file's package reached nats-server's, the
// interpreter cache's and sync.Map's instantiations: about 1,000
// functions and 1.3 CPU-s for a one-line file. Typed any, the field stops
// that walk, and a type assertion reads it back (about a nanosecond, no
// allocation).
//
// For the same reason these types' methods, exported or not, name none of
// the running server's types in their signatures, and an exported func or
// method that the compiler would inline into a handler's package names
// none in its body: it is marked go:noinline, or it calls a go:noinline
// func that does. go run ./internal/tools/archcheck measures both (what
// host's exported names lead to, and what a package calling all of them
// compiles).
func rtOf(a *App) *core {
	rt, _ := a.rt.(*core)
	return rt
}

// start builds the components, in the order they depend on each other.
// A failure closes NATS, which nothing else would close.
func (a *core) start() (err error) {
	app := a.app
	a.cfg, a.dirs = app.cfg, app.dirs
	log, err := a.ops.setup(&a.cfg, app.log, opsGauges{ // metrics and tracing (ops.go)
		apiFiles:  func() int { return cacheLen(a.api) },
		pageFiles: func() int { return cacheLen(a.site.pages) },
		queued:    func() int { return a.tasks.engine.Queued() },
	})
	if err != nil {
		return err
	}
	a.log, app.log = log, log
	if a.nats, err = startNATS(&a.cfg, a.log); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			a.nats.close()
		}
	}()
	var nc natsPublisher
	var js jetstream.JetStream
	if a.nats.conn != nil {
		nc, js = a.nats.conn.NC, a.nats.conn.JS
	}
	var reg *prometheus.Registry
	if a.ops.metrics != nil {
		reg = a.ops.registry.get()
	}
	live := liveRequests{begin: beginLive, caught: describePanic}
	if err := a.live.setup(&a.cfg, a.log, reg, nc, live); err != nil { // live_hub.go
		return err
	}
	a.shared.setup(a.log, a.nats.replicas, a.live.bus.conn, js, a.live.broadcast) // shared.go
	if a.db, err = openDB(&a.cfg, a.log, a.dirs.root, true); err != nil {
		return err
	}
	if err := app.reg.lifecycle.start(app); err != nil {
		return err
	}
	if err := a.edge.setup(&a.cfg, func(w http.ResponseWriter, r *http.Request, e *Error) {
		if !isAPIPath(r.URL.Path) {
			w = a.site.newPublicWriter(w, r) // an error page (errorpage.go)
		}
		writeError(w, r, e)
	}); err != nil {
		return err
	}
	se := &sessionEngine{cfg: &a.cfg, log: a.log, nats: &a.nats, ops: &a.ops,
		https: a.edge.isHTTPS, current: requestSession, saved: sessionSaved}
	if a.sessions, err = se.newSessionManager(); err != nil { // session_config.go
		return err
	}
	a.load = newLoader(app, &a.ops, &a.db, http.HandlerFunc(a.invoke))
	// Before setup.go and the handler files build the interpreter (tier_child.go).
	a.load.tierHeap = tierBaseHeap()
	if err := a.setup.start(a); err != nil { // setupfile.go
		return err
	}
	if a.api, err = a.load.handlerSource(a.dirs.api); err != nil {
		return err
	}
	if err := a.site.setup(siteDeps{cfg: &a.cfg, log: a.log, dirs: &a.dirs, load: a.load, hot: &a.hot,
		mw: a.setup.middleware, errorPages: app.reg.errorPages}); err != nil {
		return err
	}
	a.hot.setupRoutes(&a.dirs, a.log) // route parameters (routetree.go)
	a.echo = a.newEcho()
	a.hot.response = *echo.NewResponse(nil, discardLog)
	a.hot.coarse = coarseTimes(&a.cfg) && !a.ops.observing
	a.root = a.newRoot()
	if err := a.ops.listenMetrics(&a.cfg.Ops); err != nil {
		return err
	}
	return a.tasks.start(taskDeps{cfg: &a.cfg, log: a.log, dirs: &a.dirs, nats: &a.nats, ops: &a.ops,
		stat: a.load.statTask, onFinish: app.reg.onTaskFinish, onCall: a.shared.serveCall})
}

// newRoot builds the application's handler: the health checks and the
// request's span (opsState.root, ops.go), the outermost layer with the
// request's state and execution limit (entry, dispatch.go), then the
// current generation (setupgen.go): CORS for the allowed origins (cors.go),
// the cross-origin protection (edge.go), the global middleware, each
// instantiated once per generation, then the router.
func (a *core) newRoot() http.Handler {
	probes := []readyProbe{{"database", a.db.ready}, {"nats", a.nats.ready}, {"tasks", a.tasks.ready}}
	return a.ops.root(a.entry((*genRoot)(&a.setup)), &a.cfg.Ops, probes)
}

// router sends a request for /api or below it with one of the usual
// methods straight to the API dispatcher (serveAPI, dispatch.go), which
// resolves its files itself, as the Echo router would (newEcho); every
// other request goes through the Echo router. It reads the path as Echo's
// router does: escaped, when the request's URL has an escaped form.
type router core

func (h *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := (*core)(h)
	p := r.URL.RawPath
	if p == "" {
		p = r.URL.Path
	}
	if isAPIPath(p) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
			a.serveAPI(w, r)
			return
		}
	}
	a.echo.ServeHTTP(w, r)
}

// newEcho builds the Echo router: /api and everything below it go to the
// API dispatcher (serveAPI, dispatch.go), every other path to the public
// files (servePublic, public.go). A method Echo does not route is
// answered 405 by echoError.
func (a *core) newEcho() *echo.Echo {
	e := echo.New()
	e.Logger = discardLog
	e.HTTPErrorHandler = a.echoError
	api := echo.WrapHandler(http.HandlerFunc(a.serveAPI))
	e.Match(routedMethods, "/api", api)
	e.Match(routedMethods, "/api/*", api)
	e.Match(routedMethods, "/*", echo.WrapHandler(http.HandlerFunc(a.site.servePublic)))
	return e
}

// routedMethods are the methods the Echo router routes (Echo v4's Any):
// a request with another method is answered 405 by echoError. Echo v5's
// Any would route every method, known or not.
var routedMethods = []string{http.MethodConnect, http.MethodDelete, http.MethodGet, http.MethodHead,
	http.MethodOptions, http.MethodPatch, http.MethodPost, "PROPFIND", http.MethodPut, http.MethodTrace, "REPORT"}

// close stops what start started, in the reverse order: the task
// workers, letting running tasks finish within Config.ShutdownTimeout,
// the sessions, the file watchers, the OnStop hooks, the database, NATS,
// and last ops, which flushes their last spans.
func (a *core) close() error {
	log := a.app.Logger()
	defer a.ops.close(log) // after NATS and the tasks: flushes their last spans
	defer a.nats.close()   // last: the task engine and the sessions use it
	defer a.db.close()     // after the OnStop hooks, which may still use it
	defer a.app.reg.lifecycle.stop()
	stop, cancel := context.WithTimeout(context.Background(), time.Second)
	a.live.close(stop.Done()) // what is still open: 1001 (live_hub.go)
	cancel()
	a.shared.close()
	a.tasks.close(a.app.cfg.ShutdownTimeout)
	_ = a.sessions.Close()
	a.hot.closeRoutes()
	_ = a.setup.close()
	if err := a.site.close(); err != nil {
		log.Warn("zealgo: closing public files", "err", err)
	}
	if a.api != nil {
		return a.api.Close()
	}
	return nil
}

// cacheLen returns the number of files c holds; 0 before it exists.
func cacheLen(c fileSource[*handlerFile]) int {
	if c == nil {
		return 0
	}
	return c.Len()
}

// setupRoutes makes the route trees of api/ and public/ and logs the
// conflicts they hold (check reports them too).
func (h *hotPath) setupRoutes(dirs *appDirs, log *slog.Logger) {
	var compiled compiledListing
	if isCompiled() {
		compiled = registryListing{}
	}
	h.apiTree = newRouteTree(dirs.api, "api", compiled, log)
	h.pubTree = newRouteTree(dirs.public, "public", compiled, log)
	for _, t := range []*routeTree{h.apiTree, h.pubTree} {
		for _, c := range t.conflicts() {
			log.Error("zealgo: route conflict: "+c.msg, "file", c.file)
		}
	}
}

// closeRoutes stops watching the route trees.
func (h *hotPath) closeRoutes() {
	_ = h.apiTree.close()
	_ = h.pubTree.close()
}
