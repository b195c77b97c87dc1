// Package natsrv runs the NATS server that zealgo embeds, with JetStream
// storing its streams under a data directory and listening on the
// loopback interface only, and connects clients to it or to an existing
// server or cluster.
//
//	srv, err := natsrv.Start(natsrv.Config{DataDir: "data/nats"})
//	defer srv.Shutdown()
//	conn, err := natsrv.Connect(ctx, srv.URL(), natsrv.ConnectOptions{Name: "zealgo"})
//	defer conn.Close()
//	// conn.JS is a jetstream.JetStream
package natsrv

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// DefaultMaxPayload is the largest message the embedded server accepts
// unless Config.MaxPayload says otherwise: 8 MiB, the size above which
// NATS warns that large messages hurt its latency.
const DefaultMaxPayload = 8 << 20

// Config configures an embedded server.
type Config struct {
	// DataDir holds the JetStream file store (under DataDir/jetstream).
	// Required; it is created when missing.
	DataDir string
	// Host is the address to listen on; it must be a loopback address.
	// Default 127.0.0.1.
	Host string
	// Port is the client port; 0 picks a free one (see Server.URL).
	Port int
	// Name is the server's name, default "zealgo".
	Name string
	// Token, when set, is required from every client (Connect's
	// ConnectOptions.Token).
	Token string
	// MaxPayload bounds one message in bytes; default DefaultMaxPayload.
	MaxPayload int32
	// ReadyTimeout bounds the wait for the server to accept clients with
	// JetStream running; default 10s.
	ReadyTimeout time.Duration
	// Logger receives the server's log: notices at debug level, warnings
	// and errors at theirs. Default: nothing is logged.
	Logger *slog.Logger
}

// Server is a running embedded NATS server.
type Server struct {
	ns *server.Server
}

// Start starts an embedded server with JetStream and returns once it
// accepts clients. The file store under cfg.DataDir keeps streams, their
// messages and consumers across restarts, also after the process was
// killed.
func Start(cfg Config) (*Server, error) {
	opts, err := serverOptions(cfg)
	if err != nil {
		return nil, err
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("zealgo: nats: embedded server: %w", err)
	}
	if cfg.Logger != nil {
		ns.SetLoggerV2(slogAdapter{cfg.Logger}, false, false, false)
	}
	ns.Start()
	wait := cfg.ReadyTimeout
	if wait <= 0 {
		wait = 10 * time.Second
	}
	if !ns.ReadyForConnections(wait) || !ns.JetStreamEnabled() {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("zealgo: nats: embedded server on %s:%d with data in %s was not ready within %v",
			opts.Host, cfg.Port, cfg.DataDir, wait)
	}
	return &Server{ns: ns}, nil
}

// serverOptions checks cfg and turns it into the server's options.
func serverOptions(cfg Config) (*server.Options, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("zealgo: nats: the embedded server needs a data directory")
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("zealgo: nats: data directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("zealgo: nats: data directory: %w", err)
	}
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("zealgo: nats: the embedded server listens on loopback only, not on %q", host)
	}
	port := cfg.Port
	switch {
	case port == 0:
		port = server.RANDOM_PORT
	case port < 0 || port > 65535:
		return nil, fmt.Errorf("zealgo: nats: port %d is out of range", cfg.Port)
	}
	name := cfg.Name
	if name == "" {
		name = "zealgo"
	}
	payload := cfg.MaxPayload
	if payload <= 0 {
		payload = DefaultMaxPayload
	}
	return &server.Options{
		ServerName:    name,
		Host:          host,
		Port:          port,
		JetStream:     true,
		StoreDir:      dir,
		MaxPayload:    payload,
		Authorization: cfg.Token,
		NoSigs:        true, // the application owns the signals
		NoLog:         cfg.Logger == nil,
	}, nil
}

// URL returns the client URL, nats://127.0.0.1:<port>.
func (s *Server) URL() string { return s.ns.ClientURL() }

// Shutdown stops the server, flushing the streams to disk, and returns
// when it has stopped. Clients see their connection close.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// slogAdapter writes the server's log to a slog.Logger.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Noticef(format string, v ...any) {
	a.l.Debug("nats: " + fmt.Sprintf(format, v...))
}
func (a slogAdapter) Warnf(format string, v ...any)  { a.l.Warn("nats: " + fmt.Sprintf(format, v...)) }
func (a slogAdapter) Fatalf(format string, v ...any) { a.l.Error("nats: " + fmt.Sprintf(format, v...)) }
func (a slogAdapter) Errorf(format string, v ...any) { a.l.Error("nats: " + fmt.Sprintf(format, v...)) }
func (a slogAdapter) Debugf(format string, v ...any) {}
func (a slogAdapter) Tracef(format string, v ...any) {}
