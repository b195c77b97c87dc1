package host

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
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
	checking  bool
	libWarned libWarnings
	// tierHeap is the live heap before the interpreter's first build, in
	// a native build's child of tiered serve (tierBaseHeap); else 0.
	tierHeap uint64
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

// warn logs a problem that package check found in the file rel, which
// compiled, or in an application package (lib/...) it imports: one of a
// package file once while that file stays as it is, not once for each
// file that imports the package.
func (l *loader) warn(rel, msg string) {
	if l.checking {
		return
	}
	if m := problemPos.FindStringSubmatch(msg); m != nil && m[1] != rel && l.dirs.module != nil &&
		!l.libWarned.first(msg, filepath.Join(l.dirs.module.Dir, filepath.FromSlash(m[1]))) {
		return
	}
	l.log.Warn(msg, "file", rel)
}

// problemPos matches a problem that starts with its file's position:
// "file:line:col: message".
var problemPos = regexp.MustCompile(`^(\S+?):(\d+):(\d+): (.*)$`)

// libWarnings are the problems of package files logged, each with the
// size and modification time its file had.
type libWarnings struct {
	mu   sync.Mutex
	seen map[string]string
}

// first reports whether msg, a problem of the file at path, is to be
// logged: the first time, or since the file changed.
func (w *libWarnings) first(msg, path string) bool {
	stamp := "?"
	if fi, err := os.Stat(path); err == nil {
		stamp = fmt.Sprint(fi.Size(), " ", fi.ModTime().UnixNano())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]string{}
	}
	if w.seen[msg] == stamp {
		return false
	}
	w.seen[msg] = stamp
	return true
}
