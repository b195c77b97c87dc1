package host

import (
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Hand-over of a supervised child's connections to its successor. A
// child told to stop shares its socket with the next child (a switch of
// tiered serve, a replacement), so it can stop accepting at once; what it
// must not do is call http.Server.Shutdown while a connection it accepted
// has a request on the way: net/http drops a request it reads once
// shutting down and closes the connection without an answer, and a
// client sees EOF on a fresh connection, which it never retries. So the
// child closes its listener, waits for Serve to return (every accepted
// connection is tracked then), turns keep-alives off (each connection
// closes after its next answer, which says Connection: close; idle ones
// close now) and waits for its connections to close before it shuts down.

// handOverWait bounds the wait for the connections to close: a
// connection that a client opened and never used holds the wait this
// long; Shutdown then closes it.
const handOverWait = time.Second

// connTracker counts a server's open connections through ConnState: each
// connection passes StateNew once and StateClosed or StateHijacked once.
type connTracker struct{ open atomic.Int64 }

func newConnTracker() *connTracker { return &connTracker{} }

// state is the server's ConnState hook.
func (t *connTracker) state(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		t.open.Add(1)
	case http.StateClosed, http.StateHijacked:
		t.open.Add(-1)
	}
}

// handOver stops srv accepting on ln and lets each of its connections
// answer what it reads and close, until none is left, handOverWait has
// passed or done is closed; errc delivers Serve's return.
func (t *connTracker) handOver(srv *http.Server, ln net.Listener, errc <-chan error, done <-chan struct{}) {
	ln.Close()
	<-errc
	srv.SetKeepAlivesEnabled(false)
	limit := time.NewTimer(handOverWait)
	defer limit.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for t.open.Load() > 0 {
		select {
		case <-tick.C:
		case <-limit.C:
			return
		case <-done:
			return
		}
	}
}
