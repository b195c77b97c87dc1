package host

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// The live hub: the application's open WebSockets (websocket.go) and
// Server-Sent Events streams (sse.go), the rooms they joined, and the
// fan-out of App.Broadcast, in this process and, when NATS is on, to the
// other instances sharing it (live_bus.go). A graceful shutdown closes
// what is open with status 1001 once the drain delay has passed (drain).

// roomMember is what a room holds: a WebSocket, or a stream.
type roomMember interface {
	// deliver queues msg for the member without blocking.
	deliver(msg string)
}

// liveHub is the application's live connections and rooms.
type liveHub struct {
	cfg       RealtimeConfig // with defaults
	trusted   []string       // Config.TrustedOrigins, lower case
	anyOrigin bool           // TrustedOrigins is "*"
	log       *slog.Logger

	mu       sync.Mutex
	sockets  map[*WebSocket]struct{}
	streams  map[*SSE]struct{}
	rooms    map[string]map[roomMember]struct{}
	draining bool
	wg       sync.WaitGroup // open connections, for drain

	open    [2]atomic.Int64 // by kind
	msgsIn  [2]atomic.Int64
	msgsOut [2]atomic.Int64

	bus liveBus // NATS fan-out (live_bus.go)
	req liveRequests
}

// hubOf returns the live hub of a WebSocket or an SSE stream, from their
// field hub (an any: see rtOf).
func hubOf(hub any) *liveHub {
	h, _ := hub.(*liveHub)
	return h
}

// liveRequests is what the hub needs of the request path, given to setup
// so that the hub, its WebSockets and its streams depend on none of it.
type liveRequests struct {
	// begin records that r became a live connection of kind (the metrics
	// count its duration apart) and returns r's id, for the log
	// (beginLive, state.go).
	begin func(r *http.Request, kind int) (id string)
	// caught describes what a deferred recover() of a live handler
	// returned, as its description and frames; ok is false for no panic
	// (describePanic, panic.go).
	caught func(p any) (desc string, stack []string, ok bool)
}

// setup prepares the hub at start-up: its settings, its metrics when
// metrics are on (reg non-nil), the fan-out through nats when the
// application is on NATS (nats non-nil), and what it needs of the request
// path (req).
func (h *liveHub) setup(cfg *Config, log *slog.Logger, reg *prometheus.Registry, nats natsPublisher, req liveRequests) error {
	h.cfg, h.log, h.req = cfg.Realtime.withDefaults(), log, req
	for _, o := range cfg.TrustedOrigins {
		o = strings.ToLower(strings.TrimSpace(o))
		if o == "*" {
			h.anyOrigin = true
		}
		h.trusted = append(h.trusted, strings.TrimSuffix(o, "/"))
	}
	if reg != nil {
		h.registerMetrics(reg)
	}
	if nats != nil {
		return h.bus.subscribe(nats, h.deliverLocal)
	}
	return nil
}

// registerMetrics adds the live connections' gauge and message counters.
func (h *liveHub) registerMetrics(reg *prometheus.Registry) {
	for k, name := range kindNames {
		labels := prometheus.Labels{"kind": name}
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "zealgo_live_connections",
			Help: "Open WebSockets and Server-Sent Events streams.", ConstLabels: labels},
			func() float64 { return float64(h.open[k].Load()) }))
		for dir, n := range map[string]*atomic.Int64{"in": &h.msgsIn[k], "out": &h.msgsOut[k]} {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "zealgo_live_messages_total",
				Help:        "Messages received (in) and sent (out) on WebSockets, events sent on streams.",
				ConstLabels: prometheus.Labels{"kind": name, "direction": dir}},
				func() float64 { return float64(n.Load()) }))
		}
	}
}

// originAllowed reports whether a WebSocket handshake from r may be
// accepted: it carries no Origin (not a browser), or its origin is the
// request's own host, or one of the trusted origins.
func (h *liveHub) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || h.anyOrigin {
		return true
	}
	o := strings.ToLower(origin)
	if i := strings.Index(o, "://"); i >= 0 && o[i+3:] == strings.ToLower(r.Host) {
		return true
	}
	for _, t := range h.trusted {
		if o == t {
			return true
		}
	}
	return false
}

// addSocket registers an open WebSocket; false while draining.
func (h *liveHub) addSocket(ws *WebSocket) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining {
		return false
	}
	if h.sockets == nil {
		h.sockets = map[*WebSocket]struct{}{}
	}
	h.sockets[ws] = struct{}{}
	h.wg.Add(1)
	h.open[kindWebSocket].Add(1)
	return true
}

// removeSocket forgets a closed WebSocket and takes it out of its rooms.
func (h *liveHub) removeSocket(ws *WebSocket) {
	h.mu.Lock()
	delete(h.sockets, ws)
	for room := range ws.rooms {
		h.leaveLocked(room, ws)
	}
	h.mu.Unlock()
	h.open[kindWebSocket].Add(-1)
	h.wg.Done()
}

// addStream registers an open stream; false while draining.
func (h *liveHub) addStream(s *SSE) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining {
		return false
	}
	if h.streams == nil {
		h.streams = map[*SSE]struct{}{}
	}
	h.streams[s] = struct{}{}
	h.wg.Add(1)
	h.open[kindSSE].Add(1)
	return true
}

// removeStream forgets an ended stream and takes it out of its rooms.
func (h *liveHub) removeStream(s *SSE) {
	h.mu.Lock()
	delete(h.streams, s)
	for room := range s.rooms {
		h.leaveLocked(room, s)
	}
	h.mu.Unlock()
	h.open[kindSSE].Add(-1)
	h.wg.Done()
}

// join puts m in room; joined is m's own set of rooms, guarded by h.mu.
func (h *liveHub) join(room string, m roomMember, joined *map[string]struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rooms == nil {
		h.rooms = map[string]map[roomMember]struct{}{}
	}
	members := h.rooms[room]
	if members == nil {
		members = map[roomMember]struct{}{}
		h.rooms[room] = members
	}
	members[m] = struct{}{}
	if *joined == nil {
		*joined = map[string]struct{}{}
	}
	(*joined)[room] = struct{}{}
}

// leave takes m out of room.
func (h *liveHub) leave(room string, m roomMember, joined *map[string]struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(*joined, room)
	h.leaveLocked(room, m)
}

func (h *liveHub) leaveLocked(room string, m roomMember) {
	if members := h.rooms[room]; members != nil {
		delete(members, m)
		if len(members) == 0 {
			delete(h.rooms, room)
		}
	}
}

// broadcast sends msg to every member of room in this process, and
// through NATS to the other instances.
func (h *liveHub) broadcast(room, msg string) error {
	h.deliverLocal(room, msg)
	return h.bus.publish(room, msg)
}

// deliverLocal queues msg for the members of room in this process.
func (h *liveHub) deliverLocal(room, msg string) {
	h.mu.Lock()
	members := make([]roomMember, 0, len(h.rooms[room]))
	for m := range h.rooms[room] {
		members = append(members, m)
	}
	h.mu.Unlock()
	for _, m := range members {
		m.deliver(msg)
	}
}

// drain refuses new connections from now on and closes the open ones:
// WebSockets with status 1001 (going away), streams ended. It returns
// once they have all closed, or when done is closed.
func (h *liveHub) drain(done <-chan struct{}) {
	h.mu.Lock()
	h.draining = true
	sockets := make([]*WebSocket, 0, len(h.sockets))
	for ws := range h.sockets {
		sockets = append(sockets, ws)
	}
	streams := make([]*SSE, 0, len(h.streams))
	for s := range h.streams {
		streams = append(streams, s)
	}
	h.mu.Unlock()
	if len(sockets)+len(streams) > 0 {
		h.log.Info("zealgo: closing live connections", "websockets", len(sockets), "streams", len(streams))
	}
	for _, ws := range sockets {
		go ws.goAway()
	}
	for _, s := range streams {
		s.cancel()
	}
	all := make(chan struct{})
	go func() { h.wg.Wait(); close(all) }()
	select {
	case <-all:
	case <-done:
	}
}

// close drains what is still open (briefly) and stops the fan-out.
func (h *liveHub) close(done <-chan struct{}) {
	h.drain(done)
	h.bus.close()
}
