package host

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gorilla/sessions"
	"github.com/zealgo/zealgo/internal/natskv"
	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/sessionstore"
)

// SessionSecretEnv is the environment variable holding the secret that
// signs session cookies (at least 32 characters). Every instance behind a
// load balancer needs the same one.
const SessionSecretEnv = "ZEALGO_SESSION_SECRET"

// SessionRedisEnv is the environment variable that keeps sessions in Redis,
// for several instances behind a load balancer: a redis URL such as
// redis://127.0.0.1:6379/0, or rediss://user:password@host:6380/0 for TLS,
// parsed with redis.ParseURL. It is read at start-up, where
// SessionSecretEnv is, and used when neither Config.Session.Redis (set in
// code, or by the serve flag --session-redis) nor Config.Session.Backend
// is. Prefer it to the flag for a URL holding a password: a command line
// is visible to every user of the machine.
const SessionRedisEnv = "ZEALGO_SESSION_REDIS"

// ErrSessionNotFound is what a SessionBackend returns for an id it does not
// hold, or holds no longer.
var ErrSessionNotFound = sessionstore.ErrNotFound

// SessionConfig configures sessions (Config.Session).
type SessionConfig struct {
	// Secret signs the session cookie; at least 32 characters. Default: the
	// ZEALGO_SESSION_SECRET environment variable, else a random secret
	// generated on first use and kept in <DataDir>/session.secret (mode
	// 0600), so that sessions survive a restart.
	Secret string
	// CookieName is the name of the session cookie. Default "zealgo_session".
	CookieName string
	// MaxAge is how long a session lasts after its last change. Default 14
	// days.
	MaxAge time.Duration
	// Redis, a "host:port" address or a redis:// URL, keeps sessions in
	// Redis, for several instances behind a load balancer. The serve flag
	// --session-redis sets it. Default: the ZEALGO_SESSION_REDIS
	// environment variable (SessionRedisEnv), else files under
	// <DataDir>/sessions.
	Redis string
	// Backend keeps sessions in a store of the application's own; it wins
	// over Redis and Store.
	Backend SessionBackend
	// Store picks the session store: "file" (under <DataDir>/sessions),
	// "redis" (at Redis, which must be set) or "nats" (a key-value bucket
	// of NATS JetStream, Config.NATS, which the embedded server provides
	// too). The serve flag --session-store sets it. Default "": Redis
	// when it is set, else NATS when Config.NATS names a server that
	// several instances may share (a nats:// URL), else files.
	Store string
}

// SessionBackend keeps encoded sessions on the server by id. Load returns
// ErrSessionNotFound for an unknown or expired id; Delete of an unknown id
// is not an error; every method may be called by several goroutines at
// once. A backend that is also an io.Closer is closed with the App. The
// built-in file and Redis stores keep the same contract.
type SessionBackend interface {
	Load(ctx context.Context, id string) ([]byte, error)
	Save(ctx context.Context, id string, data []byte, ttl time.Duration) error
	Delete(ctx context.Context, id string) error
}

// WithSessionSecret sets Config.Session.Secret.
func WithSessionSecret(secret string) Option {
	return func(c *Config) { c.Session.Secret = secret }
}

// WithRedisSessions keeps sessions in the Redis server at addr, "host:port"
// or a redis:// URL (Config.Session.Redis).
func WithRedisSessions(addr string) Option {
	return func(c *Config) { c.Session.Redis = addr }
}

// WithSessionBackend keeps sessions in b (Config.Session.Backend).
func WithSessionBackend(b SessionBackend) Option {
	return func(c *Config) { c.Session.Backend = b }
}

// sessionEngine makes the session engine at start-up from what it is
// given (newSessionManager).
type sessionEngine struct {
	cfg  *Config
	log  *slog.Logger
	nats *natsState // the NATS key-value store, when the sessions are kept there
	ops  *opsState  // counts the backend's errors
	// https tells whether a request came over HTTPS (edge.go); current
	// and saved find and mark a request's session (session.go).
	https    func(*http.Request) bool
	current  func(*http.Request, *sessionstore.Manager) *sessions.Session
	saved    func(*http.Request, *sessions.Session)
	sessions *sessionstore.Manager
}

// newSessionManager checks the session configuration at start-up and
// makes the session engine on the store that SessionConfig picks: the
// application's own backend, Redis, NATS key-value or files under
// <DataDir>/sessions (sessionBackend). The secret and the session
// directory are made on first use.
func (a *sessionEngine) newSessionManager() (*sessionstore.Manager, error) {
	cfg := a.cfg.Session
	if cfg.Secret == "" {
		cfg.Secret = os.Getenv(SessionSecretEnv)
	}
	if err := sessionstore.CheckSecret(cfg.Secret); err != nil {
		return nil, err
	}
	redisFrom := "Config.Session.Redis or --session-redis"
	if cfg.Redis == "" && cfg.Backend == nil {
		cfg.Redis, redisFrom = os.Getenv(SessionRedisEnv), SessionRedisEnv
	}
	backend, owned, err := a.sessionBackend(cfg, redisFrom)
	if err != nil {
		return nil, err
	}
	m, err := sessionstore.New(sessionstore.Config{
		Backend: a.ops.countSessionErrors(backend), Secret: cfg.Secret, SecretFile: filepath.Join(a.cfg.DataDir, "session.secret"),
		CookieName: cfg.CookieName, MaxAge: cfg.MaxAge, Log: a.log,
		Current: func(r *http.Request) *sessions.Session { return a.current(r, a.sessions) },
		Saved:   a.saved, HTTPS: a.https,
	})
	if err != nil && owned {
		_ = sessionstore.CloseBackend(backend)
	}
	a.sessions = m
	return m, err
}

// sessionBackend makes the session store that cfg picks (SessionConfig.Store);
// owned is false for the application's own, which it closes itself.
func (a *sessionEngine) sessionBackend(cfg SessionConfig, redisFrom string) (b sessionstore.Backend, owned bool, err error) {
	store := cfg.Store
	switch {
	case cfg.Backend != nil:
		return cfg.Backend, false, nil
	case store == "" && cfg.Redis != "":
		store = "redis"
	case store == "" && a.nats.shared:
		store = "nats"
	}
	switch store {
	case "", "file":
		return sessionstore.NewFileBackend(filepath.Join(a.cfg.DataDir, "sessions")), true, nil
	case "redis":
		if cfg.Redis == "" {
			return nil, false, fmt.Errorf("zealgo: session store redis: set Config.Session.Redis, --session-redis or %s", SessionRedisEnv)
		}
		rb, err := sessionstore.NewRedisBackend(cfg.Redis, redisFrom)
		if err != nil {
			return nil, false, err
		}
		a.log.Info("zealgo: sessions kept in Redis", "addr", rb.Addr(), "from", redisFrom)
		return rb, true, nil
	case "nats":
		return a.natsSessions(cfg)
	}
	return nil, false, fmt.Errorf("zealgo: session store %q: want file, redis or nats", cfg.Store)
}

// natsSessions keeps sessions in the NATS key-value bucket zealgo_sessions.
func (a *sessionEngine) natsSessions(cfg SessionConfig) (sessionstore.Backend, bool, error) {
	if a.nats.conn == nil {
		return nil, false, fmt.Errorf("zealgo: session store nats: NATS is off; set --nats (or %s) to %s or a nats:// URL", NATSEnv, NATSEmbedded)
	}
	// A cluster that has just formed may still be electing leaders or
	// placing replicas: waited for, as for the other buckets.
	ctx, cancel := context.WithTimeout(context.Background(), startWait(a.cfg))
	defer cancel()
	var s *natskv.Sessions
	err := natsrv.WhileForming(ctx, a.log, "the sessions' bucket", func(ctx context.Context) (err error) {
		s, err = natskv.OpenSessions(ctx, a.nats.conn.JS, natskv.SessionConfig{MaxTTL: max(cfg.MaxAge, 30*24*time.Hour), Replicas: a.nats.replicas})
		return err
	})
	if err != nil {
		return nil, false, err
	}
	a.log.Info("zealgo: sessions kept in NATS key-value", "bucket", natskv.SessionsBucket, "server", redactNATS(a.nats.url))
	return sessionstore.NewNATSBackend(s), true, nil
}
