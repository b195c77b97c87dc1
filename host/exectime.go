package host

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
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

// serveLimited serves a request under Config.MaxExecutionTime. The
// handler runs on the request's own goroutine, watched by the state's
// timer (check): no goroutine, no hand-off and no timer operation per
// request, only its start time, which the response's start or the
// handler's return takes back with one compare-and-swap (limitWriter.begin,
// claim). When the limit passes before either, the timer's goroutine
// claims the request and answers 503 (expire), and takes the connection
// away from the handler: the response is flushed and the connection
// hijacked and closed, so that it is done (a graceful shutdown need not
// wait for it) while the handler runs on, its writes dropped; the state is
// then not reused.
func (a *core) serveLimited(st *reqState, w http.ResponseWriter, r *http.Request, next http.Handler) {
	l := st.lim
	l.on, l.a, l.st, l.r, l.w, l.limit = true, a, st, r, w, a.cfg.MaxExecutionTime
	start := int64(st.start) + 1 // never 0
	l.lw.reset(l, start, w, r.ProtoMajor == 1 && hijackable(w))
	l.start.Store(start)
	switch {
	case l.timer == nil:
		l.fired = make(chan struct{}, 1)
		// Made idle, then set: check, which uses l.timer, runs after the
		// Reset, not merely after AfterFunc returned.
		l.timer = time.AfterFunc(time.Duration(math.MaxInt64), l.check)
		l.armed.Store(true)
		l.timer.Reset(l.limit)
	case !l.armed.Load() && l.armed.CompareAndSwap(false, true): // a load first: no locked operation when armed
		l.timer.Reset(l.limit)
	}
	p := l.run(next)
	if !l.lw.claim() { // check claimed the request
		<-l.fired // expire has run (and armed the late watch): what it wrote happened before this
		l.late.end()
		return // answered 503; a panic past the limit has been logged
	}
	l.lw.finish(p)
}

// check runs on the timer's goroutine. The timer is pending (armed)
// whenever a request may be under way, and never due later than the
// request's limit: set to the limit when a request finds it idle, then
// from here to the limit of the request under way. A request past its
// limit whose response has not started is claimed (start -1) and
// expired; with none under way (or its response started) the timer rests
// until the next request.
func (l *limitState) check() {
	for {
		s := l.start.Load()
		if s <= 0 {
			l.armed.Store(false)
			// A request that began meanwhile may have found the timer armed.
			if l.start.Load() <= 0 || !l.armed.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		left := time.Duration(s-1) + l.limit - time.Since(clockBase)
		if left <= 0 { // a start from a clock reading that stood too long came early
			left += clockStale(time.Duration(s - 1))
		}
		if left > 0 {
			l.timer.Reset(left)
			return
		}
		if l.start.CompareAndSwap(s, -1) {
			l.armed.Store(false)
			l.expire()
			return
		}
		// The request ended, or the next one began: look again.
	}
}

// limitState is the execution limit of one request, part of its state.
type limitState struct {
	on    bool        // the request runs under the limit
	keep  bool        // the limit passed: the state is not reused
	timer *time.Timer // runs check
	armed atomic.Bool // timer is pending
	// start is the request's start (clockBase + start-1) while the limit
	// applies to it; 0: no request, or its response has started; -1:
	// past its limit, claimed by check.
	start atomic.Int64
	fired chan struct{} // expire has run
	lw    limitWriter
	late  lateWatch

	// The request under the limit.
	a     *core
	st    *reqState
	r     *http.Request
	w     http.ResponseWriter
	limit time.Duration
}

// release stops the timer of a state that is not given back to the pool
// once its request ended (reqState.hold): armed for the limit, the timer
// would keep the state, and through it the request's compiled file (a
// whole interpreter), reachable for the limit's length (30 s by default),
// however many requests a second hold states. No request uses the state
// again, so nothing needs the timer.
func (l *limitState) release() {
	if l.timer != nil && l.timer.Stop() {
		l.armed.Store(false)
	}
}

// run calls the handler and returns what it panicked with, or nil.
func (l *limitState) run(next http.Handler) (p any) {
	defer func() {
		p = recover()
		if p != nil && p != http.ErrAbortHandler && l.start.Load() == -1 {
			// The client has its 503: nobody else will hear of this panic.
			l.a.log.Error("panic past the execution time limit", "path", l.r.URL.Path, "panic", recovered(p).desc)
		}
	}()
	l.a.outer(l.st, &l.lw, l.r, next)
	return nil
}

// expire runs on the timer's goroutine when the limit passes, for a
// request it claimed, whose response has not started and now cannot: it
// answers 503 on the connection, which the handler can no longer write
// to, and closes it.
func (l *limitState) expire() {
	defer func() { l.fired <- struct{}{} }()
	l.lw.mu.Lock() // an informational response being sent goes first
	defer l.lw.mu.Unlock()
	a, r, w := l.a, l.r, l.w
	l.keep = true // the handler runs on with the state
	// The late watch is only set up here, on a claimed request, which
	// serveLimited ends (late.end) once this has run: a request within
	// its limit touches neither.
	l.late.state.Store(running)
	l.late.arm(a, r, l.limit, lateGrace(l.limit))
	l.st.cancel()
	unblockBody(w, !l.lw.direct)
	a.log.Warn("request past the execution time limit: 503", "method", r.Method, "path", r.URL.Path, "limit", l.limit)
	ans := a.timeoutAnswer(r, l.limit)
	if l.lw.direct {
		ans.sendRaw(w, r.Method == http.MethodHead)
		return
	}
	ans.sendTo(w)
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

// answerRequest returns, for the 503 made on the timer's goroutine, a
// request with what answering reads of r: not a copy of r, whose body and
// form the handler, still running, may be setting.
func answerRequest(r *http.Request) *http.Request {
	return &http.Request{Method: r.Method, URL: r.URL, Proto: r.Proto, ProtoMajor: r.ProtoMajor, ProtoMinor: r.ProtoMinor,
		Header: r.Header, Body: http.NoBody, Host: r.Host, RemoteAddr: r.RemoteAddr, RequestURI: r.RequestURI, TLS: r.TLS}
}

// sendRaw takes the connection of w over (hijacks it), writes the
// response held on it and closes it: for a handler that shares w's header
// map and may still be using it, net/http cannot be asked to send it. A
// response to HEAD has no body.
func (b *answerBuffer) sendRaw(w http.ResponseWriter, head bool) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	h := b.Header()
	h["Content-Length"] = []string{strconv.Itoa(len(b.body))}
	h["Connection"] = []string{"close"}
	h["Date"] = []string{time.Now().UTC().Format(http.TimeFormat)}
	code := cmp.Or(b.code, http.StatusOK)
	fmt.Fprintf(buf, "HTTP/1.1 %03d %s\r\n", code, http.StatusText(code))
	_ = h.Write(buf)
	_, _ = buf.WriteString("\r\n")
	if !head {
		_, _ = buf.Write(b.body)
	}
	_ = buf.Flush()
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
// after the response; with closeHeader, its header says so (a header map
// the handler may still be using is left alone).
func unblockBody(w http.ResponseWriter, closeHeader bool) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	if closeHeader {
		w.Header().Set("Connection", "close")
	}
}

// hijackable reports whether the connection of w can be taken over (an
// HTTP/1 connection), looking through wrappers.
func hijackable(w http.ResponseWriter) bool {
	if _, ok := w.(http.Hijacker); ok { // net/http's
		return true
	}
	_, ok := unwrapTo[http.Hijacker](w)
	return ok
}

// timeoutAnswer makes the 503 of a request past its limit, through the
// outermost layer (a request id, the error page for pages), in a state of
// its own. The answer is made whole, to be sent with its length, so that
// it is complete when the connection closes after it.
func (a *core) timeoutAnswer(r *http.Request, limit time.Duration) *answerBuffer {
	e := errorf(http.StatusServiceUnavailable, codeServiceUnavailable, "the handler did not answer within %s", limit)
	r = answerRequest(r)
	st := a.takeState(r)
	ans := new(answerBuffer)
	a.outer(st, ans, r.WithContext(st), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isAPIPath(r.URL.Path) {
			a.site.newPublicWriter(w, r) // errors outside /api/ are pages
		}
		writeError(w, r, e)
	}))
	a.putState(st)
	return ans
}

// limitWriter is the response writer of a handler under the execution
// limit. The response starts (begin) only if it takes the request back
// from the limit first; once the limit has passed (expired), the
// handler's writes are dropped with http.ErrHandlerTimeout, since the
// request has been answered and its connection closed. On an HTTP/1
// connection (direct), the handler sets the header of w itself, since the
// 503 is then written on the connection taken over (sendRaw); otherwise
// (HTTP/2), the header is its own until the response starts, and copied
// then. Its fields but mu belong to the handler's goroutine.
type limitWriter struct {
	w      http.ResponseWriter
	h      http.Header
	direct bool

	l       *limitState
	start   int64 // the request's value of l.start
	started bool  // the header went out (or the connection was hijacked)
	expired bool  // the limit claimed the request: the 503 went out instead
	// mu orders an informational response before the 503 of expire.
	mu sync.Mutex
}

// reset prepares lw for a request of l, started at start, answered on w,
// directly or not; the header map of an indirect one is reused, emptied.
func (lw *limitWriter) reset(l *limitState, start int64, w http.ResponseWriter, direct bool) {
	lw.l, lw.start, lw.w, lw.direct = l, start, w, direct
	lw.started, lw.expired = false, false
	if direct {
		return
	}
	if lw.h == nil {
		lw.h = make(http.Header)
	}
	clear(lw.h)
}

func (lw *limitWriter) Header() http.Header {
	if lw.direct {
		return lw.w.Header()
	}
	return lw.h
}

// begin starts the response, sending the header map the handler has
// built, unless the limit has passed; once started, the response belongs
// to the handler alone and the limit no longer applies.
func (lw *limitWriter) begin() bool {
	if lw.started {
		return true
	}
	if !lw.claim() {
		return false
	}
	lw.started = true
	lw.copyHeader()
	return true
}

// claim takes the request back from the limit, unless check claimed it
// first (expired): by begin, or when the handler returns with its
// response not started (a started one was taken back by begin).
func (lw *limitWriter) claim() bool {
	switch {
	case lw.started:
		return true
	case lw.expired:
		return false
	}
	if !lw.l.start.CompareAndSwap(lw.start, 0) {
		lw.expired = true
		return false
	}
	return true
}

func (lw *limitWriter) copyHeader() {
	if lw.direct {
		return
	}
	dst := lw.w.Header()
	for k, v := range lw.h {
		dst[k] = v
	}
}

func (lw *limitWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		lw.mu.Lock() // informational: the response has not started
		defer lw.mu.Unlock()
		if lw.started || !lw.expired && lw.l.start.Load() != -1 { // expire waits for mu
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

// finish ends a handler that returned in time (its worker is done with
// it): the header it set goes out (a response never written; trailers,
// once it started), and a panic passes on to this goroutine as if the
// handler had run here.
func (lw *limitWriter) finish(p any) {
	switch {
	case lw.direct:
	case lw.started:
		lw.copyTrailers()
	default:
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
	a     *core
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
func (w *lateWatch) arm(a *core, r *http.Request, limit, after time.Duration) {
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
		n := w.a.app.sup.late.Add(-1)
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
func (a *core) handlerLate(method, path string, limit time.Duration) {
	n := a.app.sup.late.Add(1)
	if c := childOf(&a.app.sup); c != nil {
		a.log.Error("a handler runs past its time limit: this process asks for a successor, then drains and stops",
			"method", method, "path", path, "limit", limit, "late_handlers", n)
		a.ops.handOver() // ops.go
		c.Replace(fmt.Sprintf("a handler (%s %s) runs past its time limit of %s", method, path, limit))
		return
	}
	a.log.Error("a handler runs past its time limit and keeps running (Go cannot stop it; under the supervisor of zealgo serve the process would be replaced)",
		"method", method, "path", path, "limit", limit, "late_handlers", n)
}
