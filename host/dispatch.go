package host

import (
	"net/http"

	"github.com/labstack/echo/v5"
)

// The request path, top-down (doc.go, "How a request flows", maps every
// step to its file). Start-up (App.setup in app.go) builds the chain once:
// outermost (entry, with the request's pooled state, the static-file fast
// path and the execution limit), the global middleware, then the Echo
// router, which sends
// /api/... to serveAPI below and every other path to servePublic
// (public.go). serveAPI resolves the file and runs the path-scoped
// middleware (middleware.go) around apiInner, which loads the file
// (load.go) and runs the file's own middleware around invoke; invoke calls
// the handler func and hands what it returned to the return contract
// (contract.go), which writes it on the response (response.go).

// entry is the outermost layer: it gives the request its state (state.go),
// serves a static file itself (serveStaticFast, static.go), and any other
// request under the execution limit (exectime.go), if there is one,
// through outer. The state goes back to its pool when the request ends.
func (a *core) entry(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := a.takeState(r)
		r = r.WithContext(st)
		switch {
		case a.setup.cur.Load().staticFast && a.site.staticFile(st, r): // static.go
			a.serveStaticFast(st, w, r)
		case a.cfg.MaxExecutionTime > 0:
			a.serveLimited(st, w, r, next)
		default:
			a.outer(st, w, r, next)
		}
		a.putState(st)
	})
}

// serveStaticFast serves a GET or HEAD of a static file, which the site
// opened into st, before the router, the execution limit and the
// interpreter, through the outermost layer (a request id, the frame
// headers, the access log): only when nothing else could answer the
// request (no global middleware, no When scope covering the path). The
// file's bytes reach the connection's ReadFrom (sendfile), through
// publicWriter.ReadFrom and fileWriter.
func (a *core) serveStaticFast(st *reqState, w http.ResponseWriter, r *http.Request) {
	defer st.static.Close()
	a.outer(st, w, r, (*staticHandler)(&a.site))
}

// outer gives the request its id, its outermost response and the edge
// settings (edge.go), and turns a panic anywhere below it into a 500
// internal_error (logged as panic.go says). Its response runs the Before
// hooks (sessions save there) whoever writes the header first.
func (a *core) outer(st *reqState, w http.ResponseWriter, r *http.Request, next http.Handler) {
	res := st.res
	*res = st.resInit
	res.ResponseWriter = w
	res.Header()["X-Request-Id"] = st.vals.one(st.id) // canonical key
	// Metrics, access log, span name (ops.go); runs after the recover below.
	if a.ops.observing {
		a.ops.startObserving()
		defer func() { a.ops.observe(st.served(), st.id, st.start, r, res) }()
	}
	st.frames = a.edge.apply(w, r, &st.vals) // frame headers, time limits (edge.go)
	defer a.recoverOuter(st, r)
	next.ServeHTTP(res, r)
}

// recoverOuter, deferred by outer, answers a panic that reached it.
func (a *core) recoverOuter(st *reqState, r *http.Request) {
	pi := caught(recover())
	if pi == nil {
		return
	}
	a.log.Error("panic", "request_id", st.id, "path", r.URL.Path, "panic", pi.desc, "stack", pi.stack())
	if !st.res.Committed {
		writeError(st.res, r, a.panicError(st.id, pi))
	}
}

// echoError answers the errors Echo's router raises itself (a method it
// does not route): the JSON envelope under /api/, an error page elsewhere.
func (a *core) echoError(c *echo.Context, err error) {
	res, r := c.Response(), c.Request()
	if er, uerr := echo.UnwrapResponse(res); uerr == nil && er.Committed {
		return
	}
	var w http.ResponseWriter = res
	if !isAPIPath(r.URL.Path) {
		w = a.site.newPublicWriter(res, r)
	}
	code, msg := echoStatus(err)
	if code == 0 {
		a.fail(w, r, err)
		return
	}
	e := errorf(code, statusCode(code), "%s", msg)
	if code == http.StatusNotFound {
		e.Hint = "nothing is served at " + r.URL.Path
	}
	writeError(w, r, e)
}

// serveAPI answers /api/...: resolves the file, answers OPTIONS, then runs
// the path-scoped middleware around apiInner.
func (a *core) serveAPI(w http.ResponseWriter, r *http.Request) {
	rt, e := a.hot.routes.resolve(a.dirs.api, a.hot.apiTree, r)
	if e != nil {
		writeError(w, r, e)
		return
	}
	st := stateOf(r)
	st.rt = rt
	st.route = &st.rt
	st.params = rt.params
	if r.Method == http.MethodOptions {
		a.serveAPIOptions(w, r, st)
		return
	}
	a.setup.middleware().scopedHandler("api", r.URL.Path, (*apiInnerHandler)(a)).ServeHTTP(w, r)
}

// serveAPIOptions answers OPTIONS 204 with the file's Allow header,
// inside the cors middleware of the When scopes that have one and outside
// every other path-scoped middleware (servePreflight, middleware.go).
func (a *core) serveAPIOptions(w http.ResponseWriter, r *http.Request, st *reqState) {
	if a.setup.middleware().servePreflight(w, r, st, (*apiHandler)(a)) {
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

// apiHandler is core.serveAPI as an http.Handler that costs no
// allocation, unlike the method value.
type apiHandler core

func (h *apiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*core)(h).serveAPI(w, r) }

// apiInnerHandler is App.apiInner as an http.Handler that costs no
// allocation per request, unlike the method value.
type apiInnerHandler core

func (h *apiInnerHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*core)(h).apiInner(w, r)
}

// apiInner loads the handler file (load.go), picks its func and runs the
// file's own middleware around invoke.
func (a *core) apiInner(w http.ResponseWriter, r *http.Request) {
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
func (a *core) invoke(w http.ResponseWriter, r *http.Request) {
	st := stateOf(r)
	// The objects every call needs live in the request's state.
	inv := &st.inv
	if st.invoking { // a call inside a call (a handler serving the app)
		inv = new(invocation)
	}
	st.invoking = true
	defer func() { st.invoking = false }()
	inv.res = Response{Parent: w, writeTimeout: a.cfg.WriteTimeout, vals: &st.vals, srvDeadline: st.srvDeadline, coarse: a.hot.coarse}
	if st.srvDeadline {
		inv.res.extended = st.start // the server's deadline, set as the request came in
	}
	inv.in = requestInput{}
	res, api, in := &inv.res, &inv.api, &inv.in
	if st.file.detach {
		st.hold() // the file's goroutines may outlive the call
	}
	q := r.URL.Query()
	in.init(r, q, &a.cfg)
	defer in.close()
	defer res.endWrite()
	*api = API{app: a.app, r: r, Res: res, in: in, params: st.params}
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
	if in.err != nil && !in.handed && !res.Committed() { // the handler recovered from inputAbort
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
func (a *core) recoverHandler(api *API, st *reqState) {
	pi := caught(recover())
	if pi == nil {
		return
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
