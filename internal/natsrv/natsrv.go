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
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
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
	log := &logAdapter{l: cfg.Logger, fatal: make(chan string, 1)}
	ns.SetLoggerV2(log, false, false, false)
	ns.Start()
	wait := cfg.ReadyTimeout
	if wait <= 0 {
		wait = 10 * time.Second
	}
	if err := waitReady(ns, log.fatal, wait); err != nil {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("zealgo: nats: embedded server on %s:%d with data in %s: %w", opts.Host, cfg.Port, opts.StoreDir, err)
	}
	return &Server{ns: ns}, nil
}

// waitReady waits until ns accepts clients with JetStream running, or
// reports what stopped it (the server logs it as fatal).
func waitReady(ns *server.Server, fatal <-chan string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		select {
		case msg := <-fatal:
			return errors.New(strings.ToLower(msg))
		default:
		}
		if ns.ReadyForConnections(20*time.Millisecond) && ns.JetStreamEnabled() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready within %v", wait)
		}
	}
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

// logAdapter writes the server's log to a slog.Logger, if any, and
// passes the first fatal message on to Start.
type logAdapter struct {
	l     *slog.Logger
	fatal chan string
}

func (a *logAdapter) Noticef(format string, v ...any) { a.log(slog.LevelDebug, format, v) }
func (a *logAdapter) Warnf(format string, v ...any)   { a.log(slog.LevelWarn, format, v) }
func (a *logAdapter) Errorf(format string, v ...any)  { a.log(slog.LevelError, format, v) }
func (a *logAdapter) Debugf(format string, v ...any)  {}
func (a *logAdapter) Tracef(format string, v ...any)  {}

func (a *logAdapter) Fatalf(format string, v ...any) {
	a.log(slog.LevelError, format, v)
	select {
	case a.fatal <- fmt.Sprintf(format, v...):
	default:
	}
}

func (a *logAdapter) log(level slog.Level, format string, v []any) {
	if a.l != nil {
		a.l.Log(context.Background(), level, "nats: "+fmt.Sprintf(format, v...))
	}
}
