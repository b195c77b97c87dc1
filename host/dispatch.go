package host

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// The request path, top-down (doc.go, "How a request flows", maps every
// step to its file). Start-up (App.setup in app.go) builds the chain once:
// outermost, the global middleware, then the Echo router, which sends
// /api/... to serveAPI below and every other path to servePublic
// (public.go). serveAPI resolves the file and runs the path-scoped
// middleware (middleware.go) around apiInner, which loads the file
// (load.go) and runs the file's own middleware around invoke; invoke calls
// the handler func and hands what it returned to the return contract
// (contract.go), which writes it on the response (response.go).

// outermost gives the request its id, its state and the edge settings
// (edge.go), and turns a panic anywhere below it into a 500
// internal_error (logged as panic.go says). Its response runs the Before hooks
// (sessions save there) whoever writes the header first.
func (a *App) outermost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := echo.NewResponse(w, a.echo)
		st := &reqState{id: newRequestID(r), app: a, res: res}
		r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
		st.idHeader[0] = st.id
		res.Header()["X-Request-Id"] = st.idHeader[:] // canonical key; no allocation of its own
		// Metrics, access log, span name (ops.go); runs after the recover below.
		if a.ops.observe {
			defer a.observe(st, r, res, a.startObserving())
		}
		a.applyEdge(w, r, st) // frame headers, time limits (edge.go)
		defer func() {
			if p := recover(); p != nil {
				pi := recovered(p)
				if pi.value == http.ErrAbortHandler {
					panic(http.ErrAbortHandler)
				}
				a.log.Error("panic", "request_id", st.id, "path", r.URL.Path, "panic", pi.desc, "stack", pi.stack())
				if !res.Committed {
					writeError(res, r, a.panicError(st.id, pi))
				}
			}
		}()
		next.ServeHTTP(res, r)
	})
}

// echoError answers the errors Echo's router raises itself (a method it
// does not route): the JSON envelope under /api/, an error page elsewhere.
func (a *App) echoError(err error, c echo.Context) {
	res, r := c.Response(), c.Request()
	if res.Committed {
		return
	}
	var w http.ResponseWriter = res
	if !isAPIPath(r.URL.Path) {
		w = a.newPublicWriter(res, r)
	}
	var he *echo.HTTPError
	if !errors.As(err, &he) {
		a.fail(w, r, err)
		return
	}
	e := errorf(he.Code, statusCode(he.Code), "%v", he.Message)
	if he.Code == http.StatusNotFound {
		e.Hint = "nothing is served at " + r.URL.Path
	}
	writeError(w, r, e)
}

// serveAPI answers /api/...: resolves the file, answers OPTIONS, then runs
// the path-scoped middleware around apiInner.
func (a *App) serveAPI(w http.ResponseWriter, r *http.Request) {
	rt, e := resolveAPI(a.dirs.api, r)
	if e != nil {
		writeError(w, r, e)
		return
	}
	st := stateOf(r)
	st.rt = rt
	st.route = &st.rt
	if r.Method == http.MethodOptions {
		a.serveAPIOptions(w, r, st)
		return
	}
	a.scopedHandler("api", r.URL.Path, (*apiInnerHandler)(a)).ServeHTTP(w, r)
}

// serveAPIOptions answers OPTIONS 204 with the file's Allow header,
// inside the cors middleware of the When scopes that have one and outside
// every other path-scoped middleware (servePreflight, middleware.go).
func (a *App) serveAPIOptions(w http.ResponseWriter, r *http.Request, st *reqState) {
	if a.servePreflight(w, r, st) {
		return
	}
	f, e := a.loadAPI(r, st.route)
	if e != nil {
		writeError(w, r, e)
		return
	}
	w.Header().Set("Allow", f.allow)
	w.WriteHeader(http.StatusNoContent)
}

// apiInnerHandler is App.apiInner as an http.Handler that costs no
// allocation per request, unlike the method value.
type apiInnerHandler App

func (h *apiInnerHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*App)(h).apiInner(w, r)
}

// apiInner loads the handler file (load.go), picks its func and runs the
// file's own middleware around invoke.
func (a *App) apiInner(w http.ResponseWriter, r *http.Request) {
	st := stateOf(r)
	f, e := a.loadAPI(r, st.route)
	if e != nil {
		writeError(w, r, e)
		return
	}
	fn, e := f.pick(r.Method)
	if e != nil {
		writeError(w, r, e)
		return
	}
	st.file, st.fn = f, fn
	f.serve.ServeHTTP(w, r)
}

// invoke calls the handler func picked for the request and hands the
// result to the return contract (respond, contract.go). It is the
// innermost handler of every file. The input (input.go) is parsed before
// the call only for a file that names a field holding it; otherwise on
// first use, or never.
func (a *App) invoke(w http.ResponseWriter, r *http.Request) {
	st := stateOf(r)
	// One allocation for the objects every call needs.
	inv := &invocation{res: Response{Parent: w, writeTimeout: a.cfg.WriteTimeout}}
	res, api, in := &inv.res, &inv.api, &inv.in
	q := r.URL.Query()
	in.init(r, q, &a.cfg)
	defer in.close()
	defer res.endWrite()
	*api = API{app: a, r: r, Res: res, in: in}
	inv.req = Request{Get: q, Header: r.Header, Parent: r, in: in}
	api.Req = &inv.req
	defer a.recoverHandler(api, st)
	if st.file.input {
		if e := in.parse(); e != nil {
			writeError(w, r, e)
			return
		}
		api.input()
	}
	v, err := st.fn.call(api)
	if in.err != nil && !res.Committed() { // the handler recovered from inputAbort
		writeError(res, r, in.err)
		_ = res.commit()
		return
	}
	a.respond(api, v, err)
}

// recoverHandler, deferred by invoke, answers a handler that panicked:
// with the input's error when an accessor could not read it (inputAbort),
// else with a 500 internal_error whose cause and stack go to the log. Once
// the response has begun it cuts the connection instead, so that the
// client cannot take part of a response for a whole one.
func (a *App) recoverHandler(api *API, st *reqState) {
	p := recover()
	if p == nil {
		return
	}
	pi := recovered(p)
	if pi.value == http.ErrAbortHandler {
		panic(http.ErrAbortHandler)
	}
	res, r := api.Res, api.r
	ab, bad := pi.value.(inputAbort)
	if !bad {
		a.logPanic(r, st, pi)
	}
	if res.Committed() {
		panic(http.ErrAbortHandler)
	}
	if bad {
		writeError(res, r, ab.e)
	} else {
		writeError(res, r, a.panicError(st.id, pi))
	}
	_ = res.commit()
}

// invocation holds what a handler call is given.
type invocation struct {
	api API
	req Request
	res Response
	in  requestInput
}

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
	g         *RequestContext // made by RequestContextOf or API.G, shared by both
	preflight bool            // servePreflight is running
	// pages is set outside /api/ (servePublic): errors are written through
	// it as error pages or the JSON envelope, chosen by the Accept header
	// when it was made. Under /api/ it stays nil: errors are JSON.
	pages *publicWriter
	// frameHeaders are the values of Content-Security-Policy and
	// X-Frame-Options (applyEdge, edge.go).
	frameHeaders [2]string
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
