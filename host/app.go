package host

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"reflect"
	"sync"

	"github.com/zealgo/zealgo/internal/deadline"
	"github.com/zealgo/zealgo/internal/gcfloor"
	"github.com/zealgo/zealgo/interp"
)

// App is a zealgo application: its configuration, middleware, hooks and,
// once started, its server. Configure it before it starts; Handler, Serve
// and Main start it.
type App struct {
	cfg     Config
	log     *slog.Logger
	symbols []interp.Exports
	reg     registration // what was registered before start

	throttleMem lazyMemoryThrottle // the default ThrottleStore (throttle.go)

	sup superviseState // crash isolation (supervise.go)

	initOnce sync.Once
	initErr  error
	started  bool
	worker   bool // this process is a task worker (serveWorker)
	dirs     appDirs
	server   *Server
	rt       any // *core, the running server, built by start-up (core.go); any: see rtOf
}

// registration is what an application registers before it starts: its
// middleware and aliases, its hooks and provided values, its error pages.
// Start-up reads it; nothing changes it afterwards.
type registration struct {
	global       []func(http.Handler) http.Handler // Use
	aliases      aliasMap                          // MiddlewareAlias and the ready-made ones
	scopes       []scope                           // When
	useAliases   []*aliasUse                       // UseAlias, resolved at start-up
	hooks        authHooks                         // AuthChecker, AdminChecker, UsernameProvider
	onTaskFinish func(id int64, result any, err error)
	lifecycle    lifecycle                           // OnStart and OnStop hooks
	provided     map[reflect.Type]reflect.Value      // Provide
	errorPages   map[int]http.Handler                // ErrorPage's, by status; 0 for any
	origins      []string                            // AllowOrigins
	errorFormat  func(r *http.Request, e *Error) any // ErrorFormatter
	// bySetup: setup.go fills this registration, and a call fixed at
	// start-up is refused (setupgen.go).
	bySetup bool
}

// appDirs are the application's directories, absolute and with symlinks
// resolved.
type appDirs struct {
	root, api, public, task, template string
	// module is the root's go.mod: files may import its packages, which
	// are interpreted from source (nil without a go.mod).
	module *interp.Module
}

// New returns an application with the given options.
func New(opts ...Option) *App {
	a := &App{cfg: defaultConfig()}
	a.reg.aliases = readyAliases(a) // aliases.go
	for _, o := range opts {
		o(&a.cfg)
	}
	a.server = &Server{app: a}
	a.rt = &core{app: a}
	return a
}

// Config returns the application's configuration.
func (a *App) Config() Config { return a.cfg }

// Configure applies options to an application that has not started yet.
func (a *App) Configure(opts ...Option) {
	a.reg.refuse("Configure")
	a.mustConfigure()
	for _, o := range opts {
		o(&a.cfg)
	}
}

// Logger returns the application's logger.
func (a *App) Logger() *slog.Logger {
	if a.log != nil {
		return a.log
	}
	if a.cfg.Logger != nil {
		return a.cfg.Logger
	}
	return slog.Default()
}

// Server returns the server handle (the spec's App::getServer()).
func (a *App) Server() *Server { return a.server }

func (a *App) mustConfigure() {
	if a.started {
		panic("zealgo: the application is configured after it started")
	}
}

// init resolves the directories and builds the Echo server, once.
func (a *App) init() error {
	a.initOnce.Do(func() { a.initErr = a.setup() })
	return a.initErr
}

func (a *App) setup() error {
	a.started = true
	if err := a.prepare(); err != nil {
		return err
	}
	return rtOf(a).start() // core.go
}

// Handler returns the application's HTTP handler, starting it: after the
// first call the application can no longer be configured.
func (a *App) Handler() (http.Handler, error) {
	a.reg.refuse("Handler")
	if err := a.init(); err != nil {
		return nil, err
	}
	return rtOf(a).root, nil
}

// Serve answers requests on ln until ctx is done, then shuts down
// gracefully within Config.ShutdownTimeout. It closes ln when it returns,
// also when the application fails to start.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	a.reg.refuse("Serve")
	h, err := a.Handler()
	if err != nil {
		ln.Close() // Serve owns ln, whether it serves or not
		return err
	}
	rt, child := rtOf(a), childOf(&a.sup) != nil
	var conns *connTracker // a supervised child hands its connections over (handover.go)
	if child {
		h, conns = a.sup.connClose(h), newConnTracker() // supervise.go
	}
	srv := &http.Server{Handler: h, Addr: ln.Addr().String(), ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
		ReadHeaderTimeout: max(a.cfg.ReadHeaderTimeout, 0), IdleTimeout: max(a.cfg.IdleTimeout, 0),
		WriteTimeout: max(a.cfg.WriteTimeout, 0)} // moved by Response.extendWrite, lifted for large files (static.go)
	if conns != nil {
		srv.ConnState = conns.state
	}
	a.server.http = srv
	defer gcfloor.Start(a.cfg.GCFloor)()
	// The server's timeouts set deadlines on every request: a shared clock
	// enforces those of a second or more (internal/deadline).
	ln = deadline.Listen(ln, deadline.Options{})
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		a.Close()
		return err
	case <-ctx.Done():
	}
	if child {
		a.sup.closeGrace() // supervise.go
	}
	rt.ops.drain(a.cfg.Ops.DrainDelay, a.Logger()) // not ready from now on (ops.go)
	sctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	rt.live.drain(sctx.Done()) // WebSockets closed with 1001, streams ended (live_hub.go)
	if conns != nil {
		conns.handOver(srv, ln, errc, sctx.Done())
		errc <- nil // Serve returned
	}
	err = srv.Shutdown(sctx)
	<-errc // Serve returned: a connection it accepted as its listener closed is tracked now
	if err == nil {
		err = srv.Shutdown(sctx) // and answered (a supervised child shares its socket with its successor)
	}
	rt.tasks.stop(sctx)
	a.Close()
	if err != nil {
		return fmt.Errorf("zealgo: shutdown: %w", err)
	}
	return nil
}

// ListenAndServe listens on Config.Addr and serves until ctx is done.
func (a *App) ListenAndServe(ctx context.Context) error {
	a.reg.refuse("ListenAndServe")
	ln, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		return fmt.Errorf("zealgo: listen: %w", err)
	}
	return a.Serve(ctx, ln)
}

// Close stops the task workers, letting running tasks finish within
// Config.ShutdownTimeout, stops watching files and closes the database. It does not stop a
// server started by Serve; cancel its context instead.
func (a *App) Close() error {
	a.reg.refuse("Close")
	return rtOf(a).close() // core.go
}

// prepare resolves the application's directories; it does not start anything.
func (a *App) prepare() error {
	if a.dirs.root != "" {
		return nil
	}
	a.log = a.Logger()
	root, err := filepath.Abs(a.cfg.Root)
	if err != nil {
		return fmt.Errorf("zealgo: root: %w", err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("zealgo: root %s: %w", a.cfg.Root, err)
	}
	a.dirs = appDirs{root: real, api: filepath.Join(real, "api"), public: filepath.Join(real, "public"),
		task: filepath.Join(real, "task"), template: filepath.Join(real, "template")}
	if a.cfg.DataDir == "" {
		a.cfg.DataDir = filepath.Join(real, "data")
	}
	if a.dirs.module, err = interp.FindModule(real); err != nil {
		return fmt.Errorf("zealgo: root %s: %w", a.cfg.Root, err)
	}
	return a.dirs.useEmbedded(a.cfg.DataDir, a.log) // zealgo build --embed (embed.go)
}
