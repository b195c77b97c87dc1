package host

import (
	"database/sql"

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
