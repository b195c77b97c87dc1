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
//
//go:noinline
func (a *App) DB() *sql.DB { return rtOf(a).db.pool }

// Metrics returns the application's Prometheus registry, which the
// metrics listener serves: register the application's own collectors
// with it. The framework's own collectors join it when the application
// starts with a metrics address.
//
//go:noinline
func (a *App) Metrics() *prometheus.Registry { return rtOf(a).ops.registry.get() }

// SessionStore returns the application's session store, a gorilla
// sessions.Store, for code written against gorilla or echo-contrib's
// session package: session.Get in middleware adapted with EchoMiddleware
// returns the same session as api.G().Session. It is nil before the
// application starts.
//
//go:noinline
func (a *App) SessionStore() sessions.Store {
	rt := rtOf(a)
	if rt.sessions == nil {
		return nil
	}
	return rt.sessions.Store()
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
	return rtOf(a).site.templates.Render(name, data)
}

// IsTaskWorker reports whether this process is a task worker, started by
// the server to run tasks, rather than the server itself.
func (a *App) IsTaskWorker() bool { return a.worker }

// Throttle returns the throttle called name, whose keys are apart from
// those of other names, with the limit of Config.ThrottleLimit and
// Config.ThrottleWindow.
func (a *App) Throttle(name string) *Throttle {
	return newThrottle(name, &a.cfg, throttleStore(&a.cfg, rtOf(a).nats.counter, &a.throttleMem), a.Logger)
}

// Broadcast sends msg to every WebSocket and stream that joined room
// (WebSocket.Join, SSE.Join): in this process and, when the application
// is on NATS, in every instance sharing it. It may be called from any
// handler or task: a task worker on NATS publishes there itself, one
// without NATS hands the broadcast to its server.
func (a *App) Broadcast(room, msg string) error {
	rt := rtOf(a)
	if rt.shared.calls != nil { // a task worker without NATS: through its server (shared.go)
		return rt.shared.call(callBroadcast, room, msg)
	}
	return rt.live.broadcast(room, msg)
}

// KV returns the shared-state bucket called bucket (1 to 64 letters,
// digits, '_' or '-'; another name makes every method fail with an
// error saying so): get, put, delete, compare-and-set, counters and time
// to live, shared by every instance and task on the same NATS, else kept
// in the server process (see KV). opts set the bucket when it is first
// opened in the process (BucketTTL).
//
//	n, err := api.App().KV("likes").Incr(api.Context(), "post-"+id, 1)
//
//go:noinline
func (a *App) KV(bucket string, opts ...KVOption) *KV {
	return newKV(&rtOf(a).shared, bucket, opts)
}

// Publish sends msg to the subscribers of subject (tokens of letters,
// digits, '-' and '_' separated by '.'): through NATS to every instance
// and task worker on it, else in the server process. Delivery is at most
// once, to the subscriptions that exist when it is sent. It may be called
// from any handler or task.
//
//go:noinline
func (a *App) Publish(subject, msg string) error { return rtOf(a).shared.publish(subject, msg) }

// Subscribe calls fn with every message published to subject from now
// on, one message at a time, until ctx is done or unsubscribe is called.
// subject may hold '*' for one token and a last '>' for the rest
// ("orders.*", "orders.>"). From a handler, pass the request's context
// (api.Context(), or the WebSocket's or stream's): the subscription then
// ends with the request, so a handler file that is saved and reloaded
// leaves none behind. A subscription made with context.Background() (in
// an OnStart hook) lasts until unsubscribe or the application closes. A
// panic of fn is logged. A task worker can subscribe only on NATS.
func (a *App) Subscribe(ctx context.Context, subject string, fn func(msg string)) (unsubscribe func(), err error) {
	return rtOf(a).shared.subscribe(ctx, subject, fn)
}

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
