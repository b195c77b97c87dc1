package host

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/zealgo/zealgo/internal/deadline"
)

// The request state. Everything the framework needs for one request lives
// in one reqState, taken from a pool when the request comes in and given
// back when it ends: its id, its outermost response, the handler call's
// API, Request and Response, its execution limit (exectime.go) and its
// context, which the state is itself (the request's context.Context
// carries it, with no context value of its own). A request therefore
// costs no allocation of the framework's but the *http.Request that
// carries the state, its query and what the handler asks for.
//
// The API, Request and Response a handler gets are valid until it
// returns (as Echo's Context is). A state that something may still use
// after its request is not given back, and the garbage collector takes it:
// a handler past its time limit, a request whose context's Done, Err or
// Deadline was asked for, a file that starts goroutines or imports
// interpreted packages (handlerFile.detach).

// hotPath is what the request path prepares once per App.
type hotPath struct {
	response echo.Response // a fresh outermost response, copied into each state
	routes   routeCache    // resolved /api/ paths (route.go)
	// coarse: a request's times may come from the shared clock (clockNow).
	coarse bool
	// apiTree and pubTree list api/ and public/ for route parameters
	// (routetree.go).
	apiTree, pubTree *routeTree
}

// reqState travels in the request context from the outermost layer to the
// handler call.
type reqState struct {
	app    *core
	parent context.Context // the request's context as it came in
	start  time.Duration   // when it came in, since clockBase
	// srvDeadline: its server sets the write deadline to
	// Config.WriteTimeout for each request (Response.extendWrite).
	srvDeadline bool
	id          string
	vals        valueBatch // header value slices (valueBatch)
	ids         string     // a batch of ids (idBatch), used from the front
	route       *apiRoute  // &rt once resolved
	rt          apiRoute
	params      []routeParam // the route's parameters (param.go)
	file        *handlerFile
	fn          *handlerFunc
	// live is 1 + kindWebSocket or kindSSE when the request became a
	// WebSocket or a stream (beginLive), 0 otherwise: its duration is the
	// connection's, which the metrics count apart.
	live uint8

	res  *echo.Response // &resv: the outermost response, for session saving
	resv echo.Response  // reset from resInit
	// resInit is App.hot.response with owedFrames registered to run
	// before its header goes out, made with the state, so that the hook
	// costs a request no allocation. Sessions add their own hooks to a
	// request's copy, which then gets a slice of its own.
	resInit   echo.Response
	frames    bool            // frame headers are owed unless the response is JSON (edgeState.apply)
	g         *RequestContext // made by RequestContextOf or API.G, shared by both
	preflight bool            // servePreflight is running
	// pages is set outside /api/ (servePublic): errors are written through
	// it as error pages or the JSON envelope, chosen by the Accept header
	// when it was made. Under /api/ it stays nil: errors are JSON.
	pages    *publicWriter
	inv      invocation // the handler call (invoke)
	invoking bool       // inv is in use

	pw         publicWriter // the error writer of a static file (serveStaticFast)
	static     *os.File     // the static file serveStaticFast serves
	staticInfo fs.FileInfo
	lim        *limitState // the execution limit (exectime.go); made once per state

	cmu      sync.Mutex    // guards done and canceled
	done     chan struct{} // made by Done on first use
	canceled bool          // the execution limit ended the context
	// keep: something may use the state after its request. An atomic, so
	// that putState reads it without the lock.
	keep atomic.Bool
}

// statePool holds the states of finished requests.
var statePool sync.Pool

// takeState returns a state for r, whose context becomes the state's
// parent.
func (a *core) takeState(r *http.Request) *reqState {
	st, _ := statePool.Get().(*reqState)
	if st == nil || st.app != a {
		st = &reqState{app: a, lim: &limitState{}}
		st.res = &st.resv
		st.resInit = a.hot.response
		st.resInit.Before(st.owedFrames) // a func value made once per state
	}
	st.parent = r.Context()
	st.start = clockNow(a.hot.coarse)
	st.srvDeadline, st.live = false, 0
	if a.cfg.WriteTimeout > 0 {
		srv, _ := st.parent.Value(http.ServerContextKey).(*http.Server)
		st.srvDeadline = srv != nil && srv.WriteTimeout == a.cfg.WriteTimeout
	}
	st.id = st.newID(r)
	return st
}

// coarseTimes reports whether the time limits of cfg counted from a
// request's arrival or its response are all off or as long as the
// deadlines the shared clock enforces (deadline.DefaultPrecise), so that
// a tick of it is nothing next to them.
func coarseTimes(cfg *Config) bool {
	coarse := func(d time.Duration) bool { return d <= 0 || d >= deadline.DefaultPrecise }
	return coarse(cfg.MaxExecutionTime) && coarse(cfg.WriteTimeout)
}

// putState gives st back to the pool, unless something may still use it.
func (a *core) putState(st *reqState) {
	if st.keep.Load() || st.lim.keep {
		if !st.lim.keep {
			st.lim.release() // the request is done: only its goroutines may still hold the state
		}
		return
	}
	// What a request sets before use (inv by invoke, resv by outer, pw by
	// serveStaticFast) is left as it is: zeroing it would cost more.
	st.parent, st.id, st.route, st.rt, st.file, st.fn, st.params = nil, "", nil, apiRoute{}, nil, nil, nil
	st.g, st.preflight, st.pages, st.invoking = nil, false, nil, false
	st.static, st.staticInfo, st.done, st.canceled = nil, nil, nil, false
	statePool.Put(st)
}

// newID returns the id of r: its X-Request-Id when that is a short name,
// else a fresh random one.
func (st *reqState) newID(r *http.Request) string {
	if v := r.Header["X-Request-Id"]; len(v) > 0 && len(v[0]) <= 64 && validName(v[0]) {
		return v[0]
	}
	if st.ids == "" {
		st.ids = idBatch()
	}
	id := st.ids[:idLen]
	st.ids = st.ids[idLen:]
	return id
}

const (
	idLen   = 16 // hexadecimal digits of a request id
	batchOf = 32 // ids made at once
)

// idBatch returns batchOf fresh random ids in one string, so that an id
// costs a 32nd of an allocation. An id names a request in the log; it is
// no secret, so the runtime's fast random source serves (crypto/rand
// costs a system call).
func idBatch() string {
	b := make([]byte, 0, idLen*batchOf)
	for range batchOf {
		b = strconv.AppendUint(b, rand.Uint64()|1<<60, 16)[:len(b)+idLen]
	}
	return string(b)
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

// beginLive records that the request r became a live connection of kind,
// for the metrics (ops.go), and returns its id: the live hub's begin
// (liveRequests, live_hub.go).
func beginLive(r *http.Request, kind int) string {
	st := stateOf(r)
	if st == nil {
		return ""
	}
	st.live = uint8(kind + 1)
	return st.id
}

// ClientIP returns the address of the client of r: the peer's, or, when
// the peer is a trusted proxy (Config.TrustedProxies), the last address
// in X-Forwarded-For that is no trusted proxy. Rate limits and throttles
// count by it.
func ClientIP(r *http.Request) string {
	var e *edgeState
	if st := stateOf(r); st != nil && st.app != nil {
		e = &st.app.edge
	}
	return e.clientIPOf(r)
}

// owedFrames runs in the outermost response (st.res) just before its
// header goes out, whoever writes it: the frame headers owed by an /api/
// response (edgeState.apply) are set unless it is JSON.
func (st *reqState) owedFrames() {
	if !st.frames {
		return
	}
	st.frames = false
	h := st.res.Header()
	if ct := h["Content-Type"]; len(ct) > 0 && isJSONType(ct[0]) {
		return
	}
	st.app.edge.setFrames(h, &st.vals)
}

// The state is the request's context: its parent's, done also when the
// execution limit passes (cancel). Asking for Done, Err or Deadline keeps
// the state from the pool, since whoever asked may keep the context.

// Deadline returns the parent's deadline.
func (st *reqState) Deadline() (time.Time, bool) {
	st.hold()
	return st.parent.Deadline()
}

// Done returns a channel closed when the parent is done or the execution
// limit has passed.
func (st *reqState) Done() <-chan struct{} {
	if !st.lim.on {
		st.hold()
		return st.parent.Done()
	}
	st.keep.Store(true)
	st.cmu.Lock()
	defer st.cmu.Unlock()
	if st.done == nil {
		st.done = make(chan struct{})
		if st.canceled {
			close(st.done)
		} else {
			context.AfterFunc(st.parent, st.cancel)
		}
	}
	return st.done
}

// Err returns context.Canceled once the execution limit has passed, else
// the parent's error.
func (st *reqState) Err() error {
	st.keep.Store(true)
	st.cmu.Lock()
	canceled := st.canceled
	st.cmu.Unlock()
	if canceled {
		return context.Canceled
	}
	return st.parent.Err()
}

// Value returns the state for stateKey, else the parent's value.
func (st *reqState) Value(key any) any {
	if key == (stateKey{}) {
		return st
	}
	return st.parent.Value(key)
}

func (st *reqState) hold() { st.keep.Store(true) }

// cancel ends the context: the execution limit passed, or the parent is
// done (through context.AfterFunc, once Done was asked for).
func (st *reqState) cancel() {
	st.cmu.Lock()
	defer st.cmu.Unlock()
	if st.canceled {
		return
	}
	st.canceled = true
	if st.done != nil {
		close(st.done)
	}
}

// served returns the file that answered st's request, for ops.observe.
func (st *reqState) served() servedFile {
	if st.file == nil {
		return servedFile{live: st.live}
	}
	return servedFile{rel: st.file.rel, series: &st.file.series, live: st.live}
}
