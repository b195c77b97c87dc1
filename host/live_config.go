package host

import "time"

// RealtimeConfig tunes WebSockets (API.WebSocket) and Server-Sent Events
// streams (API.SSE), Config.Realtime. The zero value is the default; a
// negative duration turns its limit off. Neither kind of connection is
// bound by MaxExecutionTime or WriteTimeout: once upgraded (or once a
// stream's header is sent) they live until the client or the handler
// ends them, under the limits below.
type RealtimeConfig struct {
	// ReadLimit bounds a message a WebSocket client may send: a larger
	// one closes the connection with status 1009 (message too big).
	// Default 64 KiB.
	ReadLimit int64
	// PingInterval is how often a WebSocket is pinged, so that proxies
	// keep it open and a peer that went away is noticed. Default 25s.
	PingInterval time.Duration
	// PingTimeout is how long the pong may take: past it the connection
	// is closed. Default 15s.
	PingTimeout time.Duration
	// WriteTimeout bounds each message written to a WebSocket and each
	// event sent on a stream. Default 10s.
	WriteTimeout time.Duration
	// IdleTimeout closes a WebSocket with status 1001, and ends a stream,
	// when no message went either way (a stream: no event was sent) for
	// that long. Default 1h.
	IdleTimeout time.Duration
	// Heartbeat is how long a stream may stay silent before a comment
	// line (": ping") goes out, so that proxies keep it open. Default 15s.
	Heartbeat time.Duration
	// Subprotocols are the WebSocket subprotocols offered, in order of
	// preference: the first one the client asks for is chosen
	// (WebSocket.Subprotocol). Default none.
	Subprotocols []string
	// DisableCompression turns permessage-deflate off. By default it is
	// negotiated with the clients that offer it, without context
	// takeover (each message compressed alone: little memory per
	// connection).
	DisableCompression bool
}

// withDefaults returns c with its zero fields set to the defaults.
func (c RealtimeConfig) withDefaults() RealtimeConfig {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.ReadLimit == 0 {
		c.ReadLimit = 64 << 10
	}
	def(&c.PingInterval, 25*time.Second)
	def(&c.PingTimeout, 15*time.Second)
	def(&c.WriteTimeout, 10*time.Second)
	def(&c.IdleTimeout, time.Hour)
	def(&c.Heartbeat, 15*time.Second)
	return c
}

// WithRealtime sets Config.Realtime.
func WithRealtime(c RealtimeConfig) Option { return func(cfg *Config) { cfg.Realtime = c } }

// The kinds of live connections, as the metrics label them.
const (
	kindWebSocket = iota
	kindSSE
)

var kindNames = [2]string{"websocket", "sse"}
