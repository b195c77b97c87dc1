package host

import (
	"bufio"
	"cmp"
	"fmt"
	"net"
	"net/http"
	"strconv"
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
// handler runs on the request's own goroutine, under the state's timer
// (made once per state, reset for each request): no goroutine and no
// hand-off per request. When the timer fires before the response
// started, its goroutine answers 503 (expire) and takes the connection
// away from the handler: the response is flushed and the connection
// hijacked and closed, so that it is done (a graceful shutdown need not
// wait for it) while the handler runs on, its writes dropped; the state is
// then not reused.
func (a *App) serveLimited(st *reqState, w http.ResponseWriter, r *http.Request, next http.Handler) {
	l := st.lim
	l.on, l.a, l.st, l.r, l.w, l.limit = true, a, st, r, w, a.cfg.MaxExecutionTime
	l.lw.reset(w)
	l.late.state.Store(running)
	if l.timer == nil {
		l.fired = make(chan struct{}, 1)
		l.timer = time.AfterFunc(l.limit, l.expire)
	} else {
		l.timer.Reset(l.limit)
	}
	p := l.run(next)
	if !l.timer.Stop() {
		<-l.fired // expire has run: what it wrote happened before this
		if l.lw.expired {
			return // answered 503; a panic past the limit has been logged
		}
	}
	l.lw.finish(p)
}

// limitState is the execution limit of one request, part of its state.
type limitState struct {
	on    bool          // the request runs under the limit
	keep  bool          // the limit passed: the state is not reused
	timer *time.Timer   // the limit; runs expire
	fired chan struct{} // expire has run
	lw    limitWriter
	late  lateWatch

	// The request under the limit.
	a     *App
	st    *reqState
	r     *http.Request
	w     http.ResponseWriter
	limit time.Duration
}

// run calls the handler and returns what it panicked with, or nil.
func (l *limitState) run(next http.Handler) (p any) {
	defer func() {
		p = recover()
		l.late.end()
		if p != nil && p != http.ErrAbortHandler && l.lw.isExpired() {
			// The client has its 503: nobody else will hear of this panic.
			l.a.log.Error("panic past the execution time limit", "path", l.r.URL.Path, "panic", recovered(p).desc)
		}
	}()
	l.a.outer(l.st, &l.lw, l.r, next)
	return nil
}

// expire runs on the timer's goroutine when the limit passes. Unless the
// response has started (it then runs to its end), it answers 503 on the
// connection, which the handler can no longer write to, and closes it.
func (l *limitState) expire() {
	defer func() { l.fired <- struct{}{} }()
	if !l.lw.expire() {
		return
	}
	a, r, w := l.a, l.r, l.w
	l.keep = true // the handler runs on with the state
	l.late.arm(a, r, l.limit, lateGrace(l.limit))
	l.st.cancel()
	unblockBody(w)
	a.log.Warn("request past the execution time limit: 503", "method", r.Method, "path", r.URL.Path, "limit", l.limit)
	a.writeTimeout(w, r, l.limit)
	closeConn(w)
}

// answerBuffer holds a whole response (the 503 of the limit), sent at
// once with its Content-Length.
type answerBuffer struct {
	h    http.Header
	code int
	body []byte
}

func (b *answerBuffer) Header() http.Header {
	if b.h == nil {
		b.h = make(http.Header)
	}
	return b.h
}

func (b *answerBuffer) WriteHeader(code int) {
	if b.code == 0 {
		b.code = code
	}
}

func (b *answerBuffer) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	b.body = append(b.body, p...)
	return len(p), nil
}

// sendTo writes the response held on w.
func (b *answerBuffer) sendTo(w http.ResponseWriter) {
	dst := w.Header()
	for k, v := range b.h {
		dst[k] = v
	}
	dst["Content-Length"] = []string{strconv.Itoa(len(b.body))}
	w.WriteHeader(cmp.Or(b.code, http.StatusOK))
	_, _ = w.Write(b.body)
}

// closeConn sends what was written on w and closes its connection
// (HTTP/1; over HTTP/2, where a connection cannot be hijacked, the
// stream ends when the handler returns).
func closeConn(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	conn, buf, err := rc.Hijack()
	if err != nil {
		return
	}
	_ = buf.Flush()
	_ = conn.Close()
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
// its own. The answer is made whole first and sent with its length, so
// that it is complete when the connection closes after it.
func (a *App) writeTimeout(w http.ResponseWriter, r *http.Request, limit time.Duration) {
	e := errorf(http.StatusServiceUnavailable, codeServiceUnavailable, "the handler did not answer within %s", limit)
	st := a.takeState(r)
	var ans answerBuffer
	a.outer(st, &ans, r.WithContext(st), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isAPIPath(r.URL.Path) {
			a.newPublicWriter(w, r) // errors outside /api/ are pages
		}
		writeError(w, r, e)
	}))
	a.putState(st)
	ans.sendTo(w)
}

// limitWriter is the response writer of a handler under the execution
// limit. Until the response starts, the header is its own; once the limit
// has passed (expired), the handler's writes are dropped with
// http.ErrHandlerTimeout, since the request has been answered and its
// connection closed.
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

// isExpired reports whether the limit answered the request.
func (lw *limitWriter) isExpired() bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.expired
}

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
