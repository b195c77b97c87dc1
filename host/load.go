package host

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/zealgo/zealgo/interp"
	"github.com/zealgo/zealgo/interp/check"
)

// Loading: a request's handler or page file comes from a cache of
// compiled files (interp.Cache), which compiles a file on its first
// request and again after it changes on disk. A failure to load is turned
// into the error the request answers with.

// loadAPI returns the compiled file of rt, or the error to send for r.
// Without Config.Dev a compile error names no file, line or source: its
// message goes to the log under the request id, which the client gets.
func (a *core) loadAPI(r *http.Request, rt *apiRoute) (*handlerFile, *Error) {
	f, err := a.api.Get(rt.file)
	if err == nil {
		return f, nil
	}
	e := loadError(a.log, err, "/api/"+strings.TrimPrefix(rt.module+"/"+rt.action, "/"))
	if e.Code != CodeCompileError || a.cfg.Dev {
		return nil, e
	}
	id := requestID(r)
	a.log.Error("handler failed to compile", "request_id", id, "path", r.URL.Path, "err", e.Hint)
	return nil, &Error{Status: e.Status, Code: e.Code, Fields: map[string]any{"request_id": id},
		Hint: "the handler could not be compiled; the server log has the details under request_id " + id}
}

// loadError turns a failure to load a file into the error to send.
func loadError(log *slog.Logger, err error, url string) *Error {
	if errors.Is(err, fs.ErrNotExist) {
		return errorf(http.StatusNotFound, CodeMethodNotFound, "no handler file for %s", url)
	}
	if e := asError(err); e != nil {
		return e
	}
	if e := compiledOnlyError(err); e != nil {
		return e
	}
	var ce *interp.Error
	if errors.As(err, &ce) {
		if ce.Selector != "" && ce.ReceiverType == "*"+typeAPI.Elem().PkgPath()+".API" {
			e := errorf(http.StatusNotFound, CodeUndefinedMethod, "%s:%d:%d: %s.%s is no method or field of *host.API",
				ce.File, ce.Line, ce.Col, ce.Receiver, ce.Selector)
			e.Fields = map[string]any{"method": ce.Selector}
			if s := check.Suggest(ce.Selector, apiNames); s != "" {
				e.Fields["did_you_mean"] = s
				e.Hint += "; did you mean " + s + "?"
			}
			return e
		}
		return errorf(http.StatusInternalServerError, CodeCompileError, "%s", ce.Error())
	}
	log.Error("load failed", "err", err)
	return errorf(http.StatusInternalServerError, CodeCompileError, "the handler file could not be loaded")
}

// buildHandlers returns the build func of a cache of the handler or page
// files under dir: compile, sort the funcs, wrap the file's middleware.
func (l *loader) buildHandlers(dir string) func(path string) (*handlerFile, error) {
	return func(path string) (*handlerFile, error) {
		prog, rel, err := l.compile(dir, path)
		if err != nil {
			return nil, err
		}
		f, err := l.analyze(prog, rel)
		if err != nil {
			return nil, err
		}
		f.serve = chain(l.invoke, f.mw)
		return f, nil
	}
}

// compile reads and compiles one file of the application, naming it by its
// path relative to the root. A file outside dir, symlinks resolved, counts
// as missing.
func (l *loader) compile(dir, path string) (*interp.Program, string, error) {
	real, err := filepath.EvalSymlinks(path)
	if interp.IsNotFound(err) {
		// e.g. api/mod/f/x where api/mod/f is a file: no handler, not a failure.
		return nil, "", fmt.Errorf("zealgo: %s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, "", err
	}
	if !within(dir, real) {
		return nil, "", fmt.Errorf("zealgo: %s resolves outside %s: %w", path, dir, fs.ErrNotExist)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, "", err
	}
	if !fi.Mode().IsRegular() {
		return nil, "", fmt.Errorf("zealgo: %s is not a regular file: %w", path, fs.ErrNotExist)
	}
	src, err := os.ReadFile(real)
	if err != nil {
		return nil, "", err
	}
	rel := l.dirs.rel(path)
	out := &logWriter{log: l.log, file: rel}
	prog, err := interp.CompileSource(rel, src, interp.Options{Symbols: l.app.symbols, Module: l.dirs.module, Stdout: out, Stderr: out,
		GoPanic: func(v any, stack []byte) {
			v, frames := interp.Recovered(v)
			var st any = string(stack) // a goroutine of compiled code (go f(x) with f compiled)
			if frames != nil {
				st = interp.FormatFrames(frames)
			}
			l.log.Error("panic in a goroutine", "file", rel, "panic", interp.DescribePanic(v), "stack", st)
		},
		Warn: func(msg string) { l.warn(rel, msg) }})
	if err != nil {
		var ce *interp.Error
		if errors.As(err, &ce) {
			ce.Msg = unlinkedHint(ce.Msg)
		}
		return nil, rel, err
	}
	return prog, rel, nil
}

// unlinkedHint rewrites Yaegi's message for an import it has no symbols
// for, which speaks of GOPATH, into what the application must do.
func unlinkedHint(msg string) string {
	_, after, ok := strings.Cut(msg, "unable to find source related to: \"")
	if !ok {
		return msg
	}
	pkg, _, _ := strings.Cut(after, "\"")
	if pkg == typeAPI.Elem().PkgPath() {
		return "package " + pkg + " is not linked into this binary: the application must register the host symbols with app.Symbols(symbols.Symbols)"
	}
	return "package " + pkg + " is not linked into this binary: interpreted files can import only the standard library and the packages " +
		"whose symbol tables (yaegi extract) the application registers with app.Symbols; run the application's own binary (e.g. go run ./sample check)"
}

// servingCacheOptions are cacheOptions for the handler and page files:
// without Config.Dev a changed file that does not compile leaves the
// version that served in place (the log says why).
func (l *loader) servingCacheOptions() interp.CacheOptions {
	o := l.cacheOptions()
	o.KeepLastGood = !l.cfg.Dev
	return o
}

// cacheOptions are the options of every cache of compiled files: reload
// debounce, the memory bound, and logging.
func (l *loader) cacheOptions() interp.CacheOptions {
	return interp.CacheOptions{
		Debounce:   l.cfg.ReloadDebounce,
		MaxEntries: l.cfg.MaxLoadedFiles,
		IdleTTL:    l.cfg.UnloadIdle,
		OnReload:   l.logReload,
		OnError:    func(err error) { l.log.Error("zealgo: file watcher", "err", err) },
		Observer:   l.ops.compileObserver(l.dirs.api, l.dirs.public),
		Deps: func(path string) []string { // the application packages it imports
			return interp.Dependencies(path, interp.Options{Symbols: l.app.symbols, Module: l.dirs.module})
		},
	}
}

// logReload logs what the file watcher did to a compiled file.
func (l *loader) logReload(path string, err error) {
	rel := l.dirs.rel(path)
	switch {
	case err == nil:
		l.log.Info("reloaded", "file", rel)
	case errors.Is(err, os.ErrNotExist):
		l.log.Info("removed", "file", rel)
	default:
		l.log.Warn("reload failed", "file", rel, "err", err)
	}
}

// logWriter sends what interpreted code prints to the log, a line a record.
type logWriter struct {
	log  *slog.Logger
	file string
}

func (w *logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			w.log.Info(line, "file", w.file)
		}
	}
	return len(p), nil
}

// apiNames are the exported methods and fields of *API, the candidates of
// did_you_mean.
var apiNames = func() []string {
	t := reflect.TypeOf(&API{})
	var names []string
	for i := 0; i < t.NumMethod(); i++ {
		names = append(names, t.Method(i).Name)
	}
	st := t.Elem()
	for i := 0; i < st.NumField(); i++ {
		if f := st.Field(i); f.IsExported() {
			names = append(names, f.Name)
		}
	}
	sort.Strings(names)
	return names
}()
