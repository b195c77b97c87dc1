package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/zealgo/zealgo/interp"
)

// reqState travels in the request context from the outermost layer to the
// handler call.
type reqState struct {
	id       string
	idHeader [1]string // the X-Request-Id header's value slice
	route    *apiRoute // &rt once resolved
	rt       apiRoute
	file     *handlerFile
	fn       *handlerFunc

	app       *App
	res       *echo.Response  // the outermost response, for session saving
	g         *RequestContext // made by Context or API.G, shared by both
	preflight bool            // servePreflight is running
}

type stateKey struct{}

func stateOf(r *http.Request) *reqState {
	st, _ := r.Context().Value(stateKey{}).(*reqState)
	return st
}

// requestID returns the id given to r by the outermost layer.
func requestID(r *http.Request) string {
	if st := stateOf(r); st != nil {
		return st.id
	}
	return ""
}

func newRequestID(r *http.Request) string {
	if v := r.Header["X-Request-Id"]; len(v) > 0 && len(v[0]) <= 64 && validName(v[0]) {
		return v[0]
	}
	// An id names a request in the log; it is no secret, so the runtime's
	// fast random source serves (crypto/rand costs a system call).
	var b [16]byte
	return string(strconv.AppendUint(b[:0], rand.Uint64()|1<<60, 16)[:16])
}

// newEcho builds the Echo router: the API dispatcher and the public files.
func (a *App) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = a.echoError
	api := echo.WrapHandler(http.HandlerFunc(a.serveAPI))
	e.Any("/api", api)
	e.Any("/api/*", api)
	e.Any("/*", echo.WrapHandler(http.HandlerFunc(a.servePublic)))
	return e
}

// newRoot builds the application's handler: the execution limit
// (exectime.go), the outermost layer, then the global middleware, each
// instantiated once here, then the Echo router.
func (a *App) newRoot() http.Handler {
	return a.execLimit(a.outermost(chain(a.echo, a.global)))
}

// outermost gives the request its id and state, and turns a panic anywhere
// below it into a 500 internal_error. Its response runs the Before hooks
// (sessions save there) whoever writes the header first.
func (a *App) outermost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := echo.NewResponse(w, a.echo)
		st := &reqState{id: newRequestID(r), app: a, res: res}
		r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
		st.idHeader[0] = st.id
		res.Header()["X-Request-Id"] = st.idHeader[:] // canonical key; no allocation of its own
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				a.log.Error("panic", "request_id", st.id, "path", r.URL.Path,
					"panic", interp.DescribePanic(p), "stack", string(debug.Stack()))
				if !res.Committed {
					writeError(res, internalError(st.id))
				}
			}
		}()
		next.ServeHTTP(res, r)
	})
}

// echoError answers errors Echo raises itself (no route, bad method) with
// the JSON envelope.
func (a *App) echoError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	if a.publicEchoError(err, c) { // outside /api/: an error page (errorpage.go)
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code := CodeNotFound
		if he.Code == http.StatusMethodNotAllowed {
			code = CodeMethodNotAllowed
		} else if he.Code != http.StatusNotFound {
			code = strings.ReplaceAll(strings.ToLower(http.StatusText(he.Code)), " ", "_")
		}
		writeError(c.Response(), errorf(he.Code, code, "%v", he.Message))
		return
	}
	a.fail(c.Response(), c.Request(), err)
}

func internalError(id string) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
		Hint:   "the handler failed; the server log has the details under request_id " + id,
		Fields: map[string]any{"request_id": id}}
}

// fail sends err: an *Error as it is, anything else as a logged 500.
func (a *App) fail(w http.ResponseWriter, r *http.Request, err error) {
	if res, ok := w.(*Response); ok {
		res.reset()
	}
	if e := asError(err); e != nil {
		writeError(w, e)
		return
	}
	id := requestID(r)
	a.log.Error("handler error", "request_id", id, "path", r.URL.Path, "err", err)
	writeError(w, internalError(id))
}

// serveAPI answers /api/...: resolves the file, answers OPTIONS, then runs
// the path-scoped middleware around apiInner.
func (a *App) serveAPI(w http.ResponseWriter, r *http.Request) {
	rt, e := resolveAPI(a.dirs.api, r)
	if e != nil {
		writeError(w, e)
		return
	}
	st := stateOf(r)
	st.rt = rt
	st.route = &st.rt
	if r.Method == http.MethodOptions {
		if a.servePreflight(w, r, st) {
			return
		}
		f, e := a.loadAPI(st.route)
		if e != nil {
			writeError(w, e)
			return
		}
		w.Header().Set("Allow", f.allow)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	a.scopedHandler("api", r.URL.Path, (*apiInnerHandler)(a)).ServeHTTP(w, r)
}

// apiInnerHandler is App.apiInner as an http.Handler that costs no
// allocation per request, unlike the method value.
type apiInnerHandler App

func (h *apiInnerHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*App)(h).apiInner(w, r)
}

// apiInner loads the handler file, picks its func and runs the file's own
// middleware around the call.
func (a *App) apiInner(w http.ResponseWriter, r *http.Request) {
	st := stateOf(r)
	f, e := a.loadAPI(st.route)
	if e != nil {
		writeError(w, e)
		return
	}
	fn, e := f.pick(r.Method)
	if e != nil {
		writeError(w, e)
		return
	}
	st.file, st.fn = f, fn
	f.serve.ServeHTTP(w, r)
}

// loadAPI returns the compiled file of rt, or the error to send.
func (a *App) loadAPI(rt *apiRoute) (*handlerFile, *Error) {
	f, err := a.api.Get(rt.file)
	if err == nil {
		return f, nil
	}
	return nil, a.loadError(err, "/api/"+strings.TrimPrefix(rt.module+"/"+rt.action, "/"))
}

// loadError turns a failure to load a file into the error to send.
func (a *App) loadError(err error, url string) *Error {
	if errors.Is(err, fs.ErrNotExist) {
		return errorf(http.StatusNotFound, CodeMethodNotFound, "no handler file for %s", url)
	}
	if e := asError(err); e != nil {
		return e
	}
	var ce *interp.Error
	if errors.As(err, &ce) {
		if ce.Selector != "" && ce.ReceiverType == "*"+typeAPI.Elem().PkgPath()+".API" {
			e := errorf(http.StatusNotFound, CodeUndefinedMethod, "%s:%d:%d: %s.%s is no method or field of *host.API",
				ce.File, ce.Line, ce.Col, ce.Receiver, ce.Selector)
			e.Fields = map[string]any{"method": ce.Selector}
			if s := suggest(ce.Selector, apiNames); s != "" {
				e.Fields["did_you_mean"] = s
				e.Hint += "; did you mean " + s + "?"
			}
			return e
		}
		return errorf(http.StatusInternalServerError, CodeCompileError, "%s", ce.Error())
	}
	a.log.Error("load failed", "err", err)
	return errorf(http.StatusInternalServerError, CodeCompileError, "the handler file could not be loaded")
}

// compile reads and compiles one file of the application, naming it by its
// path relative to the root. A file outside dir, symlinks resolved, counts
// as missing.
func (a *App) compile(dir, path string) (*interp.Program, string, error) {
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
	rel := a.rel(path)
	out := &logWriter{log: a.log, file: rel}
	prog, err := interp.CompileSource(rel, src, interp.Options{Symbols: a.symbols, Stdout: out, Stderr: out,
		GoPanic: func(v any, stack []byte) {
			a.log.Error("panic in a goroutine", "file", rel, "panic", interp.DescribePanic(v), "stack", string(stack))
		}})
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

// buildHandlers returns the build func of a cache of the handler or page
// files under dir: compile, sort the funcs, wrap the file's middleware.
func (a *App) buildHandlers(dir string) func(path string) (*handlerFile, error) {
	return func(path string) (*handlerFile, error) {
		prog, rel, err := a.compile(dir, path)
		if err != nil {
			return nil, err
		}
		f, err := a.analyze(prog, rel)
		if err != nil {
			return nil, err
		}
		f.serve = chain(http.HandlerFunc(a.invoke), f.mw)
		return f, nil
	}
}

// cacheOptions are the options of every cache of compiled files: reload
// debounce, the memory bound, and logging.
func (a *App) cacheOptions() interp.CacheOptions {
	return interp.CacheOptions{
		Debounce:   a.cfg.ReloadDebounce,
		MaxEntries: a.cfg.MaxLoadedFiles,
		IdleTTL:    a.cfg.UnloadIdle,
		OnReload:   a.logReload,
		OnError:    func(err error) { a.log.Error("zealgo: file watcher", "err", err) },
	}
}

// invoke calls the handler func picked for the request, with its input
// parsed and cleaned, and writes its result under the return contract.
func (a *App) invoke(w http.ResponseWriter, r *http.Request) {
	st := stateOf(r)
	// One allocation for the three objects every call needs.
	inv := &invocation{res: Response{Parent: w}}
	res := &inv.res
	api := &inv.api
	*api = API{app: a, r: r, Res: res}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			a.log.Error("handler panic", "request_id", st.id, "file", st.file.rel, "func", st.fn.name,
				"panic", interp.DescribePanic(p), "stack", string(debug.Stack()))
			if res.Committed() {
				// The client has part of a response: cut the connection so
				// that it cannot take it for a whole one.
				panic(http.ErrAbortHandler)
			}
			res.reset()
			writeError(res, internalError(st.id))
			_ = res.commit()
		}
	}()
	q := r.URL.Query()
	in := &inv.in
	if e := parseInput(in, r, q, a.cfg.MaxBodyBytes); e != nil {
		writeError(w, e)
		return
	}
	api.Input = in.input
	inv.req = Request{Get: q, Post: in.post, Header: r.Header, Parent: r, body: in.body}
	api.Req = &inv.req
	v, err := st.fn.call(api)
	a.respond(api, v, err)
}

// invocation holds what a handler call is given.
type invocation struct {
	api API
	req Request
	res Response
	in  parsedInput
}

// respond finishes the response of a handler that returned v and err.
func (a *App) respond(api *API, v any, err error) {
	res := api.Res
	if err == nil {
		err = api.err
	}
	if err == nil && api.done {
		if v != nil {
			a.log.Warn("result ignored: the handler already sent its response", "request_id", requestID(api.r))
		}
		_ = res.commit()
		return
	}
	if err == nil {
		err = a.writeResult(res, api.r, v)
	}
	if err != nil {
		if res.Committed() {
			a.log.Error("handler error after the response began", "request_id", requestID(api.r), "err", err)
			panic(http.ErrAbortHandler)
		}
		a.fail(res, api.r, err)
	}
	_ = res.commit()
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
