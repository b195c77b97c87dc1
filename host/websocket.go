package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// WebSockets (github.com/coder/websocket). A handler returns
// API.WebSocket(fn); the return contract then serves the value, which
// upgrades the connection and runs fn on the request's goroutine, in the
// generation of the handler file that accepted it (a save of the file
// does not touch it: new connections get the new code). A reader
// goroutine reads the client's messages as they come, so that pings,
// pongs and the close handshake are answered whatever fn does; a writer
// goroutine, made by the first Join, sends the room's messages.

// Error codes of a request to a WebSocket handler that is no upgrade.
const (
	// CodeUpgradeRequired: 426, the request is no WebSocket handshake.
	CodeUpgradeRequired = "upgrade_required"
	// CodeInvalidHandshake: 400, the handshake lacks its key.
	CodeInvalidHandshake = "invalid_handshake"
)

// WebSocket is an accepted WebSocket connection, handed to the func given
// to API.WebSocket. Its methods may be called from several goroutines.
type WebSocket struct {
	hub   any // *liveHub; any: see hubOf
	c     *websocket.Conn
	ctx   context.Context
	stop  context.CancelFunc
	log   *slog.Logger
	in    chan string // the client's messages, from readLoop
	rerr  error       // why readLoop ended, set before in is closed
	out   chan string // room messages, made by the first Join
	once  sync.Once   // makes out and its writer
	rooms map[string]struct{}
	last  atomic.Int64 // when a message last went either way, unix nanoseconds
	timer *time.Timer  // keep-alive: ping and idle check
	slow  atomic.Bool  // closed for falling behind its rooms
}

// wsQueue is how many room messages may wait for a slow client before
// its connection is closed (1013, try again later).
const wsQueue = 256

// checkHandshake returns the error that answers r, when it cannot be
// upgraded.
func (h *liveHub) checkHandshake(r *http.Request) *Error {
	if r.Method != http.MethodGet || !hasToken(r.Header, "Connection", "upgrade") || !hasToken(r.Header, "Upgrade", "websocket") {
		e := errorf(http.StatusUpgradeRequired, CodeUpgradeRequired,
			"%s serves WebSocket connections: a GET with Connection: Upgrade and Upgrade: websocket", r.URL.Path)
		e.Header = http.Header{"Upgrade": {"websocket"}}
		return e
	}
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		e := errorf(http.StatusUpgradeRequired, CodeUpgradeRequired, "WebSocket version 13 is the one served")
		e.Header = http.Header{"Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"}}
		return e
	}
	if r.Header.Get("Sec-WebSocket-Key") == "" {
		return errorf(http.StatusBadRequest, CodeInvalidHandshake, "the WebSocket handshake has no Sec-WebSocket-Key")
	}
	if !h.originAllowed(r) {
		return errorf(http.StatusForbidden, CodeCrossOrigin,
			"a WebSocket from origin %s is refused; the application can trust the origin with --trusted-origins", r.Header.Get("Origin"))
	}
	h.mu.Lock()
	draining := h.draining
	h.mu.Unlock()
	if draining {
		return errorf(http.StatusServiceUnavailable, codeServiceUnavailable, "the server is shutting down")
	}
	return nil
}

// hasToken reports whether a comma-separated header name holds token,
// case-insensitively.
func hasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// wsUpgrade is what API.WebSocket returns: an http.Handler that the
// return contract serves with the connection.
type wsUpgrade struct {
	hub *liveHub
	fn  func(*WebSocket) error
}

// ServeHTTP upgrades the connection, lifting the deadlines the server set
// for the request, and runs fn until the connection closes.
func (u *wsUpgrade) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := u.hub
	liftDeadlines(w)
	id := h.req.begin(r, kindWebSocket)
	opts := &websocket.AcceptOptions{InsecureSkipVerify: true, // checkHandshake checked the origin
		Subprotocols: h.cfg.Subprotocols, CompressionMode: websocket.CompressionNoContextTakeover}
	if h.cfg.DisableCompression {
		opts.CompressionMode = websocket.CompressionDisabled
	}
	c, err := websocket.Accept(w, r, opts)
	if err != nil {
		h.log.Info("zealgo: websocket handshake failed", "request_id", id, "path", r.URL.Path, "err", err)
		return
	}
	c.SetReadLimit(h.cfg.ReadLimit)
	ctx, stop := context.WithCancel(context.WithoutCancel(r.Context()))
	ws := &WebSocket{hub: h, c: c, ctx: ctx, stop: stop, in: make(chan string, 16),
		log: h.log.With("request_id", id, "path", r.URL.Path)}
	ws.touch()
	if !h.addSocket(ws) {
		_ = c.Close(websocket.StatusGoingAway, "the server is shutting down")
		stop()
		return
	}
	defer h.removeSocket(ws)
	go ws.readLoop()
	ws.keepAlive()
	ws.finish(ws.run(u.fn))
}

// liftDeadlines clears the read and write deadlines the server set on
// the connection of w for its request: an upgraded connection or a
// stream has limits of its own.
func liftDeadlines(w http.ResponseWriter) {
	if dl := deadlinesOf(w); dl != nil {
		_ = dl.SetReadDeadline(time.Time{})
		_ = dl.SetWriteDeadline(time.Time{})
	}
}

// run calls fn, turning a panic into an error whose stack is logged.
func (ws *WebSocket) run(fn func(*WebSocket) error) (err error) {
	defer func() {
		if desc, stack, ok := hubOf(ws.hub).req.caught(recover()); ok {
			ws.log.Error("panic", "panic", desc, "stack", stack)
			err = errors.New("panic: " + desc)
		}
	}()
	return fn(ws)
}

// finish closes the connection after fn returned err: 1000, or 1011 for
// an error (logged).
func (ws *WebSocket) finish(err error) {
	if err != nil {
		ws.log.Error("websocket handler error", "err", err)
		_ = ws.c.Close(websocket.StatusInternalError, "internal error")
	} else {
		_ = ws.c.Close(websocket.StatusNormalClosure, "")
	}
	if ws.timer != nil {
		ws.timer.Stop()
	}
	ws.stop()
}

// readLoop reads the client's messages into in until the connection
// closes.
func (ws *WebSocket) readLoop() {
	defer close(ws.in)
	for {
		_, b, err := ws.c.Read(ws.ctx)
		if err != nil {
			ws.rerr = fmt.Errorf("zealgo: websocket closed: %w", err)
			return
		}
		ws.touch()
		hubOf(ws.hub).msgsIn[kindWebSocket].Add(1)
		select {
		case ws.in <- string(b):
		case <-ws.ctx.Done():
			ws.rerr = errors.New("zealgo: websocket closed")
			return
		}
	}
}

func (ws *WebSocket) touch() { ws.last.Store(time.Now().UnixNano()) }

// keepAlive starts the timer that pings the client every PingInterval and
// closes a connection idle for IdleTimeout.
func (ws *WebSocket) keepAlive() {
	cfg := &hubOf(ws.hub).cfg
	every := cfg.PingInterval
	if every <= 0 || cfg.IdleTimeout > 0 && cfg.IdleTimeout < every {
		every = cfg.IdleTimeout
	}
	if every > 0 {
		ws.timer = time.AfterFunc(every, func() { ws.tick(every) })
	}
}

// tick runs on the keep-alive timer.
func (ws *WebSocket) tick(every time.Duration) {
	cfg := &hubOf(ws.hub).cfg
	if ws.ctx.Err() != nil {
		return
	}
	if cfg.IdleTimeout > 0 && time.Since(time.Unix(0, ws.last.Load())) >= cfg.IdleTimeout {
		ws.log.Info("websocket idle: closed", "idle_timeout", cfg.IdleTimeout)
		_ = ws.c.Close(websocket.StatusGoingAway, "idle")
		return
	}
	if cfg.PingInterval > 0 {
		ctx, cancel := context.WithTimeout(ws.ctx, max(cfg.PingTimeout, time.Millisecond))
		err := ws.c.Ping(ctx)
		cancel()
		if err != nil {
			if ws.ctx.Err() == nil {
				ws.log.Info("websocket: no pong, closed", "err", err)
				_ = ws.c.CloseNow()
			}
			return
		}
	}
	ws.timer.Reset(every)
}

// Read returns the next message from the client (text, or binary as a
// string), waiting for it; an error once the connection has closed.
func (ws *WebSocket) Read() (string, error) {
	m, ok := <-ws.in
	if !ok {
		return "", ws.rerr
	}
	return m, nil
}

// ReadJSON reads the next message and decodes it as JSON into v.
func (ws *WebSocket) ReadJSON(v any) error {
	m, err := ws.Read()
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(m), v); err != nil {
		return fmt.Errorf("zealgo: websocket message: %w", err)
	}
	return nil
}

// Write sends msg as a text message, within Config.Realtime.WriteTimeout
// (past it the connection closes).
func (ws *WebSocket) Write(msg string) error {
	ctx, cancel := context.WithTimeout(ws.ctx, hubOf(ws.hub).cfg.WriteTimeout)
	defer cancel()
	if err := ws.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return fmt.Errorf("zealgo: websocket write: %w", err)
	}
	ws.touch()
	hubOf(ws.hub).msgsOut[kindWebSocket].Add(1)
	return nil
}

// WriteJSON sends v encoded as JSON in a text message.
func (ws *WebSocket) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("zealgo: websocket message: %w", err)
	}
	return ws.Write(string(b))
}

// Close closes the connection with a status code (1000 normal, 1001
// going away, 4000-4999 the application's own) and a reason of at most
// 123 bytes, waiting briefly for the client to answer.
func (ws *WebSocket) Close(code int, reason string) {
	_ = ws.c.Close(websocket.StatusCode(code), reason)
}

// Subprotocol returns the subprotocol chosen from
// Config.Realtime.Subprotocols, or "".
func (ws *WebSocket) Subprotocol() string { return ws.c.Subprotocol() }

// Context returns a context done when the connection has closed.
func (ws *WebSocket) Context() context.Context { return ws.ctx }

// Join adds the connection to room: every App.Broadcast to it, from this
// instance or another one on the same NATS, is sent to the client. A
// connection leaves its rooms when it closes.
func (ws *WebSocket) Join(room string) {
	ws.once.Do(func() {
		ws.out = make(chan string, wsQueue)
		go ws.writeLoop()
	})
	hubOf(ws.hub).join(room, ws, &ws.rooms)
}

// Leave takes the connection out of room.
//
//go:noinline
func (ws *WebSocket) Leave(room string) { hubOf(ws.hub).leave(room, ws, &ws.rooms) }

// deliver queues a room's message; a client that has wsQueue of them
// waiting is too slow, and its connection is closed (1013).
func (ws *WebSocket) deliver(msg string) {
	select {
	case ws.out <- msg:
	default:
		if ws.slow.CompareAndSwap(false, true) {
			ws.log.Warn("websocket too slow for its rooms: closed", "queued", wsQueue)
			go ws.c.Close(websocket.StatusTryAgainLater, "too slow")
		}
	}
}

// writeLoop sends the room messages in order.
func (ws *WebSocket) writeLoop() {
	for {
		select {
		case m := <-ws.out:
			if ws.Write(m) != nil {
				return
			}
		case <-ws.ctx.Done():
			return
		}
	}
}

// goAway closes the connection at shutdown, with 1001.
func (ws *WebSocket) goAway() {
	_ = ws.c.Close(websocket.StatusGoingAway, "the server is shutting down")
}
