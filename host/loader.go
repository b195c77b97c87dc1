package host

import (
	"log/slog"
	"net/http"
	"path/filepath"
)

// loader compiles and analyzes the application's files: the handler and
// page files the dispatcher and the site serve, the task files the task
// workers run, and the files zealgo check checks. It is made by the
// server at start-up, by a task worker, and by the check command, each
// with what it needs.
type loader struct {
	app  *App // registration: symbols, provided values, middleware aliases; what a *App parameter receives
	cfg  *Config
	log  *slog.Logger
	dirs *appDirs
	ops  *opsState // the compile metrics
	db   *dbState  // what a *sql.DB parameter receives
	// invoke is the innermost handler of every handler and page file
	// (the dispatcher's, dispatch.go); nil where nothing serves.
	invoke http.Handler
	// checking: zealgo check runs, and compile warnings are its output,
	// not the log's.
	checking bool
}

// newLoader returns the loader of app's files, with its configuration,
// log and directories as they are now.
func newLoader(app *App, ops *opsState, db *dbState, invoke http.Handler) *loader {
	return &loader{app: app, cfg: &app.cfg, log: app.log, dirs: &app.dirs, ops: ops, db: db, invoke: invoke}
}

// rel returns path relative to the application root, slash-separated.
func (d *appDirs) rel(path string) string {
	if r, err := filepath.Rel(d.root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}
