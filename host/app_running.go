package host

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"

	"github.com/gorilla/sessions"
	"github.com/prometheus/client_golang/prometheus"
)

// What the running application offers its code: the database, the
// metrics registry, the sessions, the templates, whether this process is
// a task worker. Each reads a component of the running server (core.go).

// DB returns the application's database pool, open from start-up until
// Close, nil before: SQLite in <data dir>/app.db (write-ahead log, a busy
// timeout, foreign keys on, writes one at a time, reads in parallel)
// unless --db, Config.DB or $ZEALGO_DB name another database, sqlite:PATH
// or postgres://.... A handler or task parameter of type *sql.DB receives
// the same pool. OnStart hooks see it open, with the migrations run.
func (a *App) DB() *sql.DB { return a.rt.db.pool }

// Metrics returns the application's Prometheus registry, which the
// metrics listener serves: register the application's own collectors
// with it. The framework's own collectors join it when the application
// starts with a metrics address.
func (a *App) Metrics() *prometheus.Registry { return a.rt.ops.registry.get() }

// SessionStore returns the application's session store, a gorilla
// sessions.Store, for code written against gorilla or echo-contrib's
// session package: session.Get in middleware adapted with EchoMiddleware
// returns the same session as api.G().Session. It is nil before the
// application starts.
func (a *App) SessionStore() sessions.Store {
	if a.rt.sessions == nil {
		return nil
	}
	return a.rt.sessions.Store()
}

// Render executes template/<name>.html with data and returns the result as
// a value for the return contract: the HTML as a string, or an error (a
// missing template, a parse or execution failure), which is a 500 when a
// page or handler returns it:
//
//	var index = func(app *host.App) any { return app.Render("home", map[string]any{"Title": "Hi"}) }
func (a *App) Render(name string, data any) any {
	html, err := a.RenderHTML(name, data)
	if err != nil {
		return err
	}
	return html
}

// RenderHTML executes template/<name>.html with data and returns the HTML.
// Nothing is returned when execution fails part way.
func (a *App) RenderHTML(name string, data any) (string, error) {
	if err := a.init(); err != nil {
		return "", err
	}
	return a.rt.site.templates.Render(name, data)
}

// IsTaskWorker reports whether this process is a task worker, started by
// the server to run tasks, rather than the server itself.
func (a *App) IsTaskWorker() bool { return a.worker }

// Throttle returns the throttle called name, whose keys are apart from
// those of other names, with the limit of Config.ThrottleLimit and
// Config.ThrottleWindow.
func (a *App) Throttle(name string) *Throttle {
	return newThrottle(name, &a.cfg, throttleStore(&a.cfg, a.rt.nats.counter, &a.throttleMem), a.Logger)
}

// Broadcast sends msg to every WebSocket and stream that joined room
// (WebSocket.Join, SSE.Join): in this process and, when the application
// is on NATS, in every instance sharing it. It may be called from any
// handler or task; a task worker reaches the server's connections only
// through NATS, and returns an error without it.
func (a *App) Broadcast(room, msg string) error { return a.rt.live.broadcast(room, msg) }

// Routes compiles every handler and page file and lists what it serves.
func (a *App) Routes() ([]Route, error) { return listRoutes(a) }

// Check checks every file under api/, public/ and task/ and every
// template, and returns each problem as "file:line:col: message" with the
// number of files it read. It needs no run-time secrets.
func (a *App) Check() (problems []string, files int, err error) {
	diags, files, err := checkAll(a)
	for _, d := range diags {
		problems = append(problems, d.String())
	}
	return problems, files, err
}

// Run runs the command line args (without the program name) and returns
// the exit status. Serving stops when ctx is done.
func (a *App) Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a.reg.refuse("Run")
	c := &cli{a: a, name: "zealgo", stdout: stdout, stderr: stderr}
	if a.sup.fromMain && len(os.Args) > 0 { // help and completion name the program
		c.name = filepath.Base(os.Args[0])
	}
	return c.run(ctx, args)
}
