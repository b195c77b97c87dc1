package host

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The execution limit (Config.MaxExecutionTime, serve --max-execution-time,
// default 30s like PHP's max_execution_time). A request whose response has
// not started within the limit gets 503 service_unavailable (the JSON
// envelope under /api/ and for clients that prefer JSON, an error page
// otherwise), and its context is done. A response that has started (a
// stream, a hijacked connection) is not cut: the limit bounds the time to
// the first byte. Past the limit the request's body can no longer be read,
// and its connection closes after the 503.
//
// Go cannot stop a goroutine: a handler that never looks at its context
// (a loop) runs on and keeps a CPU busy. One still running lateGrace after
// its limit is late: in a process under the supervisor of `zealgo serve`,
// the process then asks for a successor, which takes over the socket
// while this one drains its other requests and exits, as PHP-FPM's
// request_terminate_timeout ends a worker; served in-process, it is
// logged. The timeout middleware alias reports its late handlers the same
// way (lateWatched).

// codeServiceUnavailable is the error code of a request past its limit.
const codeServiceUnavailable = "service_unavailable"

// serveLimited serves a request under Config.MaxExecutionTime. The
// handler runs on a worker goroutine (limitWorker) while the request's
// goroutine waits for it or for the state's timer, made once per state
// and reset for each request. Past the limit, before the response
// started, the request's goroutine answers 503 and returns, so that its
// connection is done (it closes, and a graceful shutdown need not wait
// for it), and leaves the handler running on its worker, its writes
// dropped; the state is then not reused.
func (a *App) serveLimited(st *reqState, w http.ResponseWriter, r *http.Request, next http.Handler) {
	l := st.lim
	l.on, l.a, l.st, l.r, l.next, l.limit = true, a, st, r, next, a.cfg.MaxExecutionTime
	l.lw.reset(w)
	l.late.state.Store(running)
	if l.timer == nil {
		l.timer = time.NewTimer(l.limit)
		l.done = make(chan any, 1)
	} else {
		l.timer.Reset(l.limit)
	}
	startWorker(l)
	select {
	case p := <-l.done:
		l.timer.Stop()
		l.lw.finish(p)
		return
	case <-l.timer.C:
	}
	if !l.lw.expire() { // the response has started: it runs to its end
		l.lw.finish(<-l.done)
		return
	}
	l.keep = true // the handler runs on with the state
	l.late.arm(a, r, l.limit, lateGrace(l.limit))
	st.cancel()
	unblockBody(w)
	a.log.Warn("request past the execution time limit: 503", "method", r.Method, "path", r.URL.Path, "limit", l.limit)
	a.writeTimeout(w, r, l.limit)
}

// limitState is the execution limit of one request, part of its state.
type limitState struct {
	on    bool        // the request runs under the limit
	keep  bool        // the limit passed: the state is not reused
	timer *time.Timer // the limit
	done  chan any    // what the handler panicked with, or nil, when it returns
	lw    limitWriter
	late  lateWatch

	// The call the worker makes.
	a     *App
	st    *reqState
	r     *http.Request
	next  http.Handler
	limit time.Duration
}

// run is the handler's call on its worker.
func (l *limitState) run() {
	defer func() {
		p := recover()
		l.late.end()
		l.done <- p
	}()
	l.a.outer(l.st, &l.lw, l.r, l.next)
}

// limitWorker is a goroutine that runs handlers under the limit, one
// after the other: reused, its stack stays the size the interpreter needs
// and a request costs no goroutine of its own. A worker whose handler is
// late stays with it.
type limitWorker struct{ calls chan *limitState }

// idleWorkers holds the workers waiting for a call; a worker that finds
// it full ends.
var idleWorkers = make(chan *limitWorker, 256)

// startWorker hands l's call to an idle worker, or a new one.
func startWorker(l *limitState) {
	var w *limitWorker
	select {
	case w = <-idleWorkers:
	default:
		w = &limitWorker{calls: make(chan *limitState, 1)}
		go w.serve()
	}
	w.calls <- l
}

func (w *limitWorker) serve() {
	for l := range w.calls {
		l.run()
		select {
		case idleWorkers <- w:
		default:
			return
		}
	}
}

// unblockBody, called before a 503 for a handler still running, makes
// every read of the request's body fail from now on (a read deadline in
// the past), so that a handler blocked reading a body that does not come
// returns instead of running on late (net/http also waits for that read
// before it sends the 503). The connection, whose reads now fail, closes
// after the response.
func unblockBody(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	w.Header().Set("Connection", "close")
}

// writeTimeout answers a request past its limit with 503, through the
// outermost layer (a request id, the error page for pages), in a state of
// its own.
func (a *App) writeTimeout(w http.ResponseWriter, r *http.Request, limit time.Duration) {
	e := errorf(http.StatusServiceUnavailable, codeServiceUnavailable, "the handler did not answer within %s", limit)
	st := a.takeState(r)
	a.outer(st, w, r.WithContext(st), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isAPIPath(r.URL.Path) {
			a.newPublicWriter(w, r) // errors outside /api/ are pages
		}
		writeError(w, r, e)
	}))
	a.putState(st)
}

// limitWriter is the response writer of a handler under the execution
// limit. Until the response starts, the header is its own; once the limit
// has passed (expired), the handler's writes are dropped with
// http.ErrHandlerTimeout, since the request has been answered and the
// connection may already serve the next one.
type limitWriter struct {
	w http.ResponseWriter
	h http.Header

	mu      sync.Mutex
	started bool // the header went out (or the connection was hijacked)
	expired bool // the 503 went out instead
}

// reset prepares lw for a request answered on w; the header map is
// reused, emptied.
func (lw *limitWriter) reset(w http.ResponseWriter) {
	if lw.h == nil {
		lw.h = make(http.Header)
	}
	clear(lw.h)
	lw.w = w
	lw.started, lw.expired = false, false
}

func (lw *limitWriter) Header() http.Header { return lw.h }

// begin starts the response, sending the header map the handler has
// built, unless the limit has passed; once started, the response belongs
// to the handler alone.
func (lw *limitWriter) begin() bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.expired {
		return false
	}
	if !lw.started {
		lw.copyHeader()
		lw.started = true
	}
	return true
}

func (lw *limitWriter) copyHeader() {
	dst := lw.w.Header()
	for k, v := range lw.h {
		dst[k] = v
	}
}

func (lw *limitWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		lw.mu.Lock() // informational: the response has not started
		defer lw.mu.Unlock()
		if !lw.expired {
			lw.copyHeader()
			lw.w.WriteHeader(code)
		}
		return
	}
	if lw.begin() {
		lw.w.WriteHeader(code)
	}
}

func (lw *limitWriter) Write(b []byte) (int, error) {
	if !lw.begin() {
		return 0, http.ErrHandlerTimeout
	}
	return lw.w.Write(b)
}

// FlushError flushes the response, starting it; http.ResponseController
// and Echo's Response.Flush call it.
func (lw *limitWriter) FlushError() error {
	if !lw.begin() {
		return http.ErrHandlerTimeout
	}
	return http.NewResponseController(lw.w).Flush()
}

func (lw *limitWriter) Flush() { _ = lw.FlushError() }

// Hijack hands the connection over; the limit no longer applies to it.
func (lw *limitWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if !lw.begin() {
		return nil, nil, http.ErrHandlerTimeout
	}
	return http.NewResponseController(lw.w).Hijack()
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (lw *limitWriter) Unwrap() http.ResponseWriter { return lw.w }

// expire marks the response answered by the limit, unless it has started.
func (lw *limitWriter) expire() bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.started {
		return false
	}
	lw.expired = true
	return true
}

// finish ends a handler that returned in time (its worker is done with
// it): the header it set goes out (a response never written; trailers,
// once it started), and a panic passes on to this goroutine as if the
// handler had run here.
func (lw *limitWriter) finish(p any) {
	if lw.started {
		lw.copyTrailers()
	} else {
		lw.copyHeader()
	}
	if p != nil {
		panic(p)
	}
}

// copyTrailers copies, after the response started, what of the header
// map net/http still reads: the trailers (declared in Trailer before the
// start, or named with http.TrailerPrefix).
func (lw *limitWriter) copyTrailers() {
	dst := lw.w.Header()
	for k, v := range lw.h {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			dst[k] = v
		}
	}
	for _, declared := range lw.h["Trailer"] {
		for _, k := range strings.Split(declared, ",") {
			k = http.CanonicalHeaderKey(strings.TrimSpace(k))
			if v, ok := lw.h[k]; ok {
				dst[k] = v
			}
		}
	}
}

// lateGrace is how long a handler may run on past its limit, its context
// done, before it counts as late: a quarter of the limit, between 50ms and
// 1s.
func lateGrace(limit time.Duration) time.Duration {
	return min(max(limit/4, 50*time.Millisecond), time.Second)
}

// lateWatch reports a handler still running some time after its limit.
// The zero value watches nothing; arm starts it.
type lateWatch struct {
	a     *App
	state atomic.Int32 // running, armed, late or ended
}

const (
	running int32 = iota
	armed
	late
	ended
)

// arm reports the handler of r late unless it returns within after; its
// limit was limit. A handler that has returned already is not watched.
func (w *lateWatch) arm(a *App, r *http.Request, limit, after time.Duration) {
	w.a = a
	if !w.state.CompareAndSwap(running, armed) {
		return
	}
	method, path := r.Method, r.URL.Path
	time.AfterFunc(after, func() {
		if w.state.CompareAndSwap(armed, late) {
			a.handlerLate(method, path, limit)
		}
	})
}

// end: the handler returned. Calls after the first do nothing.
func (w *lateWatch) end() {
	if w.state.CompareAndSwap(running, ended) || w.state.CompareAndSwap(armed, ended) {
		return
	}
	if w.state.CompareAndSwap(late, ended) {
		n := w.a.sup.late.Add(-1)
		w.a.log.Warn("a late handler returned", "late_handlers", n)
	}
}

// lateWatched runs next, under the timeout alias's http.TimeoutHandler,
// with its late handlers reported as the execution limit's are.
func lateWatched(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st := stateOf(r); st != nil {
			var watch lateWatch
			watch.arm(st.app, r, d, d+lateGrace(d))
			defer watch.end()
		}
		next.ServeHTTP(w, r)
	})
}

// handlerLate reports a handler running past its limit: a supervised
// process asks for its successor (supervise.go); otherwise it is logged.
func (a *App) handlerLate(method, path string, limit time.Duration) {
	n := a.sup.late.Add(1)
	if c := a.sup.child; c != nil {
		a.log.Error("a handler runs past its time limit: this process asks for a successor, then drains and stops",
			"method", method, "path", path, "limit", limit, "late_handlers", n)
		a.handOver() // ops.go
		c.Replace(fmt.Sprintf("a handler (%s %s) runs past its time limit of %s", method, path, limit))
		return
	}
	a.log.Error("a handler runs past its time limit and keeps running (Go cannot stop it; under the supervisor of zealgo serve the process would be replaced)",
		"method", method, "path", path, "limit", limit, "late_handlers", n)
}
