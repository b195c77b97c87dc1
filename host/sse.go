package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server-Sent Events. A handler returns API.SSE(fn); the return contract
// serves the value, which sends the stream's header at once (so that the
// execution limit no longer applies) and runs fn on the request's
// goroutine until it returns or the client goes away. Writes are
// serialised by the stream's lock: fn's Send, the heartbeat timer and the
// room writer share it, and none writes once the stream has ended.

// Event is one Server-Sent Event. Data may hold several lines: each goes
// out as a data: line of its own, and the browser's EventSource joins them
// again with "\n". ID, when set, is what the browser sends back in
// Last-Event-ID when it reconnects; Event names the event type (default
// "message"); Retry, when positive, tells the browser how long to wait
// before reconnecting.
type Event struct {
	ID    string
	Event string
	Data  string
	Retry time.Duration
}

// SSE is a Server-Sent Events stream, handed to the func given to
// API.SSE.
type SSE struct {
	hub    any // *liveHub; any: see hubOf
	w      http.ResponseWriter
	rc     *http.ResponseController
	lastID string
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex // guards what follows, and the writes
	ended  bool
	sent   time.Time // when an event last went out
	timer  *time.Timer
	buf    []byte
	rooms  map[string]struct{} // guarded by hub.mu
	out    chan string
	outOne sync.Once
}

// sseStream is what API.SSE returns: an http.Handler that the return
// contract serves.
type sseStream struct {
	hub *liveHub
	fn  func(*SSE) error
}

// ServeHTTP sends the stream's header and runs fn.
func (u *sseStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := u.hub
	liftDeadlines(w)
	id := h.req.begin(r, kindSSE)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	hd.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	ctx, cancel := context.WithCancel(r.Context())
	s := &SSE{hub: h, w: w, rc: http.NewResponseController(w), lastID: r.Header.Get("Last-Event-ID"),
		ctx: ctx, cancel: cancel, sent: time.Now()}
	defer cancel()
	if err := s.rc.Flush(); err != nil || !h.addStream(s) {
		return
	}
	defer h.removeStream(s)
	if h.cfg.Heartbeat > 0 {
		s.mu.Lock()
		s.timer = time.AfterFunc(h.cfg.Heartbeat, s.beat)
		s.mu.Unlock()
	}
	log := h.log.With("request_id", id, "path", r.URL.Path)
	err := s.run(u.fn)
	if err != nil {
		log.Error("sse handler error", "err", err)
	}
	s.end()
}

// run calls fn, turning a panic into an error.
func (s *SSE) run(fn func(*SSE) error) (err error) {
	defer func() {
		if desc, stack, ok := hubOf(s.hub).req.caught(recover()); ok {
			err = fmt.Errorf("panic: %s\n%s", desc, stack)
		}
	}()
	return fn(s)
}

// end stops every write: the handler is about to return.
func (s *SSE) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	if s.timer != nil {
		s.timer.Stop()
	}
	s.cancel()
}

// Send writes ev and flushes it, within Config.Realtime.WriteTimeout. It
// fails once the stream has ended (the client went away).
func (s *SSE) Send(ev Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = appendEvent(s.buf[:0], ev)
	if err := s.write(s.buf); err != nil {
		return err
	}
	s.sent = time.Now()
	hubOf(s.hub).msgsOut[kindSSE].Add(1)
	return nil
}

// write sends b and flushes, with s.mu held.
func (s *SSE) write(b []byte) error {
	if s.ended || s.ctx.Err() != nil {
		return errors.New("zealgo: sse: the stream has ended")
	}
	if d := hubOf(s.hub).cfg.WriteTimeout; d > 0 {
		_ = s.rc.SetWriteDeadline(time.Now().Add(d))
	}
	_, err := s.w.Write(b)
	if err == nil {
		err = s.rc.Flush()
	}
	if err != nil {
		s.cancel()
		return fmt.Errorf("zealgo: sse: %w", err)
	}
	if s.timer != nil {
		s.timer.Reset(hubOf(s.hub).cfg.Heartbeat)
	}
	return nil
}

// beat runs on the heartbeat timer: a comment line keeps the stream
// open, unless it has been idle for IdleTimeout, which ends it.
func (s *SSE) beat() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	if d := hubOf(s.hub).cfg.IdleTimeout; d > 0 && time.Since(s.sent) >= d {
		s.cancel()
		return
	}
	_ = s.write([]byte(": ping\n\n"))
}

// appendEvent appends the framing of ev to b: its id, event and retry
// fields (line breaks dropped), a data: line for each line of Data, and
// the blank line that ends an event.
func appendEvent(b []byte, ev Event) []byte {
	field := func(name, v string) {
		if v == "" {
			return
		}
		v = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == 0 {
				return -1
			}
			return r
		}, v)
		b = append(append(append(b, name...), ": "...), v...)
		b = append(b, '\n')
	}
	field("id", ev.ID)
	field("event", ev.Event)
	if ev.Retry > 0 {
		field("retry", strconv.FormatInt(ev.Retry.Milliseconds(), 10))
	}
	data := strings.ReplaceAll(strings.ReplaceAll(ev.Data, "\r\n", "\n"), "\r", "\n")
	for line := range strings.SplitSeq(data, "\n") {
		b = append(append(append(b, "data: "...), line...), '\n')
	}
	return append(b, '\n')
}

// LastEventID returns the Last-Event-ID a reconnecting browser sent: the
// ID of the last event it received, or "".
func (s *SSE) LastEventID() string { return s.lastID }

// Context returns a context done when the stream has ended: the client
// went away, the server shuts down, or the stream was idle too long.
func (s *SSE) Context() context.Context { return s.ctx }

// Wait pauses the stream for d and reports whether the client is still
// there (false: it left, and the func should return). It is the pause
// between events that interpreted code should use instead of a select on
// Context().Done() and time.After: Yaegi v0.16.1 keeps a select
// statement's cases once per statement, so two requests running the same
// select at once may wake on each other's channels.
func (s *SSE) Wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return false
	case <-t.C:
		return s.ctx.Err() == nil
	}
}

// Join adds the stream to room: every App.Broadcast to it is sent as an
// event whose Data is the message. A stream leaves its rooms when it ends.
func (s *SSE) Join(room string) {
	s.outOne.Do(func() {
		s.out = make(chan string, wsQueue)
		go s.writeLoop()
	})
	hubOf(s.hub).join(room, s, &s.rooms)
}

// Leave takes the stream out of room.
//
//go:noinline
func (s *SSE) Leave(room string) { hubOf(s.hub).leave(room, s, &s.rooms) }

// deliver queues a room's message; a stream too slow for its rooms is
// ended.
func (s *SSE) deliver(msg string) {
	select {
	case s.out <- msg:
	default:
		s.cancel()
	}
}

// writeLoop sends the room messages in order.
func (s *SSE) writeLoop() {
	for {
		select {
		case m := <-s.out:
			if s.Send(Event{Data: m}) != nil {
				return
			}
		case <-s.ctx.Done():
			return
		}
	}
}
