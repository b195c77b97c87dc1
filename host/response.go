package host

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// bufferLimit is how much a Response holds back before it sends its header
// and starts writing through.
const bufferLimit = 64 << 10

// Response is the response wrapper handed to handlers (the spec's
// $response). Writes are buffered, as PHP's output buffer does, so that a
// handler may write a body and still return a status; the buffer is sent when
// the handler returns, when Flush is called, or when it grows past 64 KiB.
// Response implements http.ResponseWriter, http.Flusher, and Unwrap for
// http.ResponseController.
type Response struct {
	// Parent is the underlying http.ResponseWriter (the spec's ->parent).
	Parent http.ResponseWriter

	status    int
	committed bool
	buf       *outBuffer // from bufPool, while something is held back
	wrote     bool
	before    []func(*Response)

	vals         *valueBatch   // the request's header values (state.go); nil: allocated
	writeTimeout time.Duration // Config.WriteTimeout
	extended     time.Duration // when the write deadline was last set (since clockBase); 0: never
	// srvDeadline: the server sets the write deadline to WriteTimeout
	// when it has read each request's header (net/http's WriteTimeout);
	// extended starts as the request's arrival.
	srvDeadline bool
	coarse      bool // its times may come from the shared clock (clockNow)
}

// BeforeCommit registers f to run once, just before the header is sent:
// the last moment to set headers and cookies (sessions save here).
func (r *Response) BeforeCommit(f func(*Response)) { r.before = append(r.before, f) }

// Header returns the response headers; they are sent with the first flush.
func (r *Response) Header() http.Header { return r.Parent.Header() }

// WriteHeader sets the status code. Before the header is sent it may be
// called again to change it; after that it does nothing.
func (r *Response) WriteHeader(code int) {
	if !r.committed {
		r.status = code
	}
}

// Write buffers b, or writes it through once the header has been sent.
func (r *Response) Write(b []byte) (int, error) {
	r.wrote = true
	if r.committed {
		r.extendWrite(false)
		return r.Parent.Write(b)
	}
	n, _ := r.buffer().Write(b)
	return n, r.spill()
}

// WriteString is Write for a string.
func (r *Response) WriteString(s string) (int, error) {
	r.wrote = true
	if r.committed {
		r.extendWrite(false)
		return io.WriteString(r.Parent, s)
	}
	n, _ := r.buffer().WriteString(s)
	return n, r.spill()
}

// spill sends the header and the buffer once the buffer has grown past
// bufferLimit; from then on writes go through.
func (r *Response) spill() error {
	if r.buf.Len() > bufferLimit {
		return r.commit()
	}
	return nil
}

// Status returns the status code set so far (200 if none).
func (r *Response) Status() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// Committed reports whether the header has been sent.
func (r *Response) Committed() bool { return r.committed }

// Written reports whether anything was written or a status was set.
func (r *Response) Written() bool { return r.wrote || r.status != 0 }

// Flush sends the header and whatever is buffered, then flushes the
// connection, so that a client sees it now.
func (r *Response) Flush() {
	if err := r.commit(); err != nil {
		return
	}
	r.extendWrite(true)
	_ = http.NewResponseController(r.Parent).Flush()
}

// extendWrite moves the connection's write deadline to
// Config.WriteTimeout from now: when the response starts (commit), at
// every flush and hand-over (force), and for writes past the buffer once
// the deadline is older than writeSlack, so that a response that keeps
// moving is never cut, and one whose client stopped reading is. However
// long the handler computed before it does not count. A deadline that the
// server set when the request came in (srvDeadline) counts as set then: a
// response that starts within writeSlack of the request keeps it, with no
// call.
func (r *Response) extendWrite(force bool) {
	if r.writeTimeout <= 0 {
		return
	}
	now := clockNow(r.coarse)
	if !force && r.extended != 0 && now-r.extended < writeSlack(r.writeTimeout) {
		return
	}
	r.extended = now
	if dl := deadlinesOf(r.Parent); dl != nil {
		_ = dl.SetWriteDeadline(clockBase.Add(now + r.writeTimeout))
	}
}

// writeSlack is how much older than now a write deadline may be before a
// write moves it: a quarter of the timeout, at most a second.
func writeSlack(timeout time.Duration) time.Duration { return min(timeout/4, time.Second) }

// endWrite lifts the write deadline extendWrite set, when the handler call
// ends, so that it cannot cut the next response on the connection; a
// server that sets the deadline for each request (srvDeadline) sets it
// again before the next response.
func (r *Response) endWrite() {
	if r.extended == 0 || r.srvDeadline {
		return
	}
	if dl := deadlinesOf(r.Parent); dl != nil {
		_ = dl.SetWriteDeadline(time.Time{})
	}
}

// Unwrap returns Parent, for http.ResponseController.
func (r *Response) Unwrap() http.ResponseWriter { return r.Parent }

// reset drops what is buffered and the status, if nothing was sent yet.
func (r *Response) reset() bool {
	if r.committed {
		return false
	}
	r.release()
	r.status = 0
	r.wrote = false
	return true
}

// outBuffer is the body buffer of a Response, with a JSON encoder that
// writes into it (writeJSON, contract.go).
type outBuffer struct {
	bytes.Buffer
	enc *json.Encoder
}

// bufPool holds the buffers of Responses, so that a request costs no
// allocation for its body.
var bufPool = sync.Pool{New: func() any {
	b := new(outBuffer)
	b.enc = json.NewEncoder(&b.Buffer)
	return b
}}

// buffer returns the body buffer, taking one from the pool if needed.
func (r *Response) buffer() *outBuffer {
	if r.buf == nil {
		r.buf = bufPool.Get().(*outBuffer)
	}
	return r.buf
}

// release gives the body buffer back to the pool, emptied. A buffer grown
// past the limit at which a Response writes through is let go instead.
func (r *Response) release() {
	if r.buf == nil {
		return
	}
	if r.buf.Cap() <= 2*bufferLimit {
		r.buf.Reset()
		bufPool.Put(r.buf)
	}
	r.buf = nil
}

// handOver sends what is buffered, if anything was written, and returns
// Parent, for a handler that writes the rest of the response itself; the
// Response sends nothing more.
func (r *Response) handOver() (http.ResponseWriter, error) {
	if r.Written() {
		if err := r.commit(); err != nil {
			return nil, err
		}
	}
	r.committed = true
	r.extendWrite(true) // the handler writes the rest itself
	return r.Parent, nil
}

// commit sends the header and the buffered body.
func (r *Response) commit() error {
	if r.committed {
		return nil
	}
	for len(r.before) > 0 {
		f := r.before[0]
		r.before = r.before[1:]
		f(r)
	}
	r.committed = true
	r.extendWrite(false)
	r.Parent.WriteHeader(r.Status())
	if r.buf == nil {
		return nil
	}
	var err error
	if r.buf.Len() > 0 {
		_, err = r.Parent.Write(r.buf.Bytes())
	}
	r.release()
	return err
}
