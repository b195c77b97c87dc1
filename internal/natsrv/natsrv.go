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
	"net/url"
	"os"
	"path/filepath"
	"strconv"
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
	// Cluster, when its Name is set, makes the server a node of a NATS
	// cluster: JetStream then replicates streams across the nodes.
	Cluster ClusterConfig
	// Sync is the file store's fsync policy: SyncAlways (every write is
	// on disk before it is acknowledged: nothing acknowledged is lost
	// when the machine loses power), or an interval such as "1s" (up to
	// that much of the latest writes may be lost with the machine, not
	// with the process). Default SyncAlways.
	Sync string
}

// SyncAlways is the Config.Sync of a store that fsyncs every write.
const SyncAlways = "always"

// ClusterConfig makes the embedded server a node of a cluster.
type ClusterConfig struct {
	// Name is the cluster's name, the same on every node.
	Name string
	// Listen is the HOST:PORT where the other nodes' routes connect
	// (default 0.0.0.0:6222). Put it on a private network: routes carry
	// every message.
	Listen string
	// Routes are the other nodes' route URLs, nats-route://host:6222
	// (nats:// is taken as the same).
	Routes []string
}

// Server is a running embedded NATS server.
type Server struct {
	ns      *server.Server
	marker  string // the file that says the server runs, removed at Shutdown
	unclean bool
}

// runningFile, under Config.DataDir, exists while a server runs on it: one
// found at start tells that the last server on the directory ended
// without Shutdown (it was killed, or the machine failed).
const runningFile = "zealgo-nats-running"

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
	marker := filepath.Join(opts.StoreDir, runningFile)
	_, merr := os.Stat(marker)
	unclean := merr == nil
	if err := os.WriteFile(marker, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("zealgo: nats: data directory: %w", err)
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
		_ = os.Remove(marker)
		return nil, fmt.Errorf("zealgo: nats: embedded server on %s:%d with data in %s: %w", opts.Host, cfg.Port, opts.StoreDir, err)
	}
	return &Server{ns: ns, marker: marker, unclean: unclean}, nil
}

// Unclean reports whether the last server on the data directory ended
// without Shutdown. JetStream keeps every message it acknowledged, but
// the state of its consumers is written about every 100ms and not
// synced: the deliveries (and acknowledgements) of the last moments
// before a crash may be forgotten, and their messages delivered again as
// first deliveries.
func (s *Server) Unclean() bool { return s.unclean }

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
	opts := &server.Options{
		ServerName:    name,
		Host:          host,
		Port:          port,
		JetStream:     true,
		StoreDir:      dir,
		MaxPayload:    payload,
		Authorization: cfg.Token,
		NoSigs:        true, // the application owns the signals
	}
	if err := syncOptions(opts, cfg.Sync); err != nil {
		return nil, err
	}
	return opts, clusterOptions(opts, cfg.Cluster)
}

// syncOptions sets the file store's fsync policy.
func syncOptions(opts *server.Options, sync string) error {
	if sync == "" || sync == SyncAlways {
		opts.SyncAlways = true
		return nil
	}
	d, err := time.ParseDuration(sync)
	if err != nil || d <= 0 {
		return fmt.Errorf("zealgo: nats: sync %q: want %q or a positive duration such as 1s", sync, SyncAlways)
	}
	opts.SyncInterval = d
	return nil
}

// clusterOptions makes opts a cluster node when c names a cluster.
func clusterOptions(opts *server.Options, c ClusterConfig) error {
	if c.Name == "" {
		if len(c.Routes) > 0 {
			return errors.New("zealgo: nats: routes need a cluster name")
		}
		return nil
	}
	listen := c.Listen
	if listen == "" {
		listen = "0.0.0.0:6222"
	}
	host, portStr, err := net.SplitHostPort(listen)
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil || port < 0 || port > 65535 {
		return fmt.Errorf("zealgo: nats: cluster address %q: want HOST:PORT", listen)
	}
	// Clients of an embedded node reach it alone, on loopback: the
	// other nodes' client addresses are of no use to them.
	opts.Cluster = server.ClusterOpts{Name: c.Name, Host: host, Port: port, NoAdvertise: true}
	if port == 0 {
		opts.Cluster.Port = server.RANDOM_PORT
	}
	for _, r := range c.Routes {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		u, err := url.Parse(r)
		if err != nil || u.Host == "" {
			return fmt.Errorf("zealgo: nats: route %q: want nats-route://HOST:PORT", r)
		}
		if u.Scheme == "nats" {
			u.Scheme = "nats-route"
		}
		opts.Routes = append(opts.Routes, u)
	}
	return nil
}

// ClusterURL returns the route URL other nodes reach this one by, when
// it is a cluster node ("" otherwise).
func (s *Server) ClusterURL() string {
	addr := s.ns.ClusterAddr()
	if addr == nil {
		return ""
	}
	return "nats-route://" + addr.String()
}

// URL returns the client URL, nats://127.0.0.1:<port>.
func (s *Server) URL() string { return s.ns.ClientURL() }

// Shutdown stops the server, flushing the streams to disk, and returns
// when it has stopped. Clients see their connection close.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	_ = os.Remove(s.marker)
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
