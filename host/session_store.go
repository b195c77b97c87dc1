package host

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo-contrib/session"
	"github.com/labstack/echo/v4"
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
var ErrSessionNotFound = errors.New("zealgo: session not found")

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
	// over Redis.
	Backend SessionBackend
}

// SessionBackend keeps encoded sessions on the server by id. Load returns
// ErrSessionNotFound for an unknown or expired id. A backend that is also
// an io.Closer is closed with the App.
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

func init() {
	// Interface values must be registered with gob; these are the common
	// ones beyond the basic types gob knows.
	gob.Register(map[string]any{})
	gob.Register([]any{})
	gob.Register(time.Time{})
}

// sessionManager holds the application's session store.
type sessionManager struct {
	cfg     SessionConfig
	log     *slog.Logger
	dataDir string
	backend SessionBackend
	store   *serverStore
	contrib echo.MiddlewareFunc // echo-contrib's session middleware on store

	once  sync.Once
	codec *securecookie.SecureCookie
	err   error
}

// newSessionManager checks the session configuration at start-up. The
// secret and the session directory are made on first use.
func (a *App) newSessionManager() (*sessionManager, error) {
	cfg := a.cfg.Session
	if cfg.CookieName == "" {
		cfg.CookieName = "zealgo_session"
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 14 * 24 * time.Hour
	}
	if cfg.Secret == "" {
		cfg.Secret = os.Getenv(SessionSecretEnv)
	}
	if cfg.Secret != "" && len(cfg.Secret) < 32 {
		return nil, fmt.Errorf("zealgo: the session secret is %d characters long; it needs at least 32", len(cfg.Secret))
	}
	redisFrom := "Config.Session.Redis or --session-redis"
	if cfg.Redis == "" && cfg.Backend == nil {
		cfg.Redis, redisFrom = os.Getenv(SessionRedisEnv), SessionRedisEnv
	}
	m := &sessionManager{cfg: cfg, log: a.log, dataDir: a.cfg.DataDir}
	switch {
	case cfg.Backend != nil:
		m.backend = cfg.Backend
	case cfg.Redis != "":
		b, err := newRedisBackend(cfg.Redis, redisFrom)
		if err != nil {
			return nil, err
		}
		a.log.Info("zealgo: sessions kept in Redis", "addr", b.addr, "from", redisFrom)
		m.backend = b
	default:
		m.backend = &fileBackend{dir: filepath.Join(a.cfg.DataDir, "sessions")}
	}
	m.store = &serverStore{m: m}
	m.contrib = session.Middleware(m.store)
	return m, nil
}

// close closes the backend; it may be called more than once.
func (m *sessionManager) close() {
	if m == nil {
		return
	}
	if c, ok := m.backend.(io.Closer); ok {
		_ = c.Close()
	}
}

// ready makes the cookie codec, reading or generating the secret, once.
func (m *sessionManager) ready() error {
	m.once.Do(func() {
		secret := m.cfg.Secret
		if secret == "" {
			secret, m.err = loadSecret(filepath.Join(m.dataDir, "session.secret"), m.log)
			if m.err != nil {
				return
			}
		}
		mac := hmac.New(sha512.New, []byte(secret))
		mac.Write([]byte("zealgo session cookie"))
		m.codec = securecookie.New(mac.Sum(nil), nil)
		m.codec.MaxAge(int(m.cfg.MaxAge / time.Second))
	})
	return m.err
}

// loadSecret reads the secret kept in path, or generates it there with
// mode 0600; of several processes starting at once, one writes it.
func loadSecret(path string, log *slog.Logger) (string, error) {
	for range 3 {
		b, err := os.ReadFile(path)
		if err == nil {
			if s := strings.TrimSpace(string(b)); len(s) >= 32 {
				if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
					log.Warn("zealgo: the session secret file is readable by others; chmod 600 it", "file", path)
				}
				return s, nil
			}
			// A file being written by another process: try again.
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("zealgo: session secret: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", fmt.Errorf("zealgo: session secret: %w", err)
		}
		var raw [32]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return "", fmt.Errorf("zealgo: session secret: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("zealgo: session secret: %w", err)
		}
		s := hex.EncodeToString(raw[:])
		_, err = f.WriteString(s + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("zealgo: session secret: %w", err)
		}
		log.Info("zealgo: generated the session secret", "file", path)
		return s, nil
	}
	return "", fmt.Errorf("zealgo: session secret %s is empty or too short", path)
}

// options returns the cookie options for a response to r: HttpOnly,
// SameSite=Lax, and Secure when r came over TLS (directly, or through a
// proxy that says so in X-Forwarded-Proto).
func (m *sessionManager) options(r *http.Request) sessions.Options {
	return sessions.Options{
		Path:     "/",
		MaxAge:   int(m.cfg.MaxAge / time.Second),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
	}
}

// ctx bounds a store call; it outlives a client that went away.
func storeContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
}

func (m *sessionManager) delete(r *http.Request, id string) error {
	ctx, cancel := storeContext(r)
	defer cancel()
	return m.backend.Delete(ctx, id)
}

// write saves sess in the backend and sets its cookie on w.
func (m *sessionManager) write(r *http.Request, w http.ResponseWriter, sess *sessions.Session) error {
	if err := m.ready(); err != nil {
		return err
	}
	if sess.ID == "" {
		sess.ID = newSessionID()
	}
	vals := make(map[string]any, len(sess.Values))
	for k, v := range sess.Values {
		if ks, ok := k.(string); ok {
			vals[ks] = v
		}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(vals); err != nil {
		return fmt.Errorf("zealgo: session values cannot be stored (gob.Register their types): %w", err)
	}
	ctx, cancel := storeContext(r)
	defer cancel()
	if err := m.backend.Save(ctx, sess.ID, buf.Bytes(), m.cfg.MaxAge); err != nil {
		return fmt.Errorf("zealgo: session save: %w", err)
	}
	enc, err := m.codec.Encode(sess.Name(), sess.ID)
	if err != nil {
		return fmt.Errorf("zealgo: session cookie: %w", err)
	}
	opts := m.options(r)
	http.SetCookie(w, sessions.NewCookie(sess.Name(), enc, &opts))
	return nil
}

// newSessionID returns 256 random bits, URL-safe.
func newSessionID() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// validSessionID reports whether id has the shape newSessionID makes.
func validSessionID(id string) bool {
	if len(id) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}

// serverStore is the application's gorilla sessions.Store: the cookie
// holds the id signed with the secret, the values stay in the backend. It
// is what App.SessionStore returns, for echo-contrib's session middleware.
type serverStore struct{ m *sessionManager }

// Get returns the session of the request; inside a zealgo application the
// session cookie's session is the request's own Session.
func (st *serverStore) Get(r *http.Request, name string) (*sessions.Session, error) {
	if g := contextOf(r); g != nil && g.Session.m == st.m && name == st.m.cfg.CookieName {
		return g.Session.raw(), nil
	}
	return st.New(r, name)
}

// New loads the session named by the request's cookie. A missing, forged,
// tampered, expired or unknown cookie gives a new, empty session.
func (st *serverStore) New(r *http.Request, name string) (*sessions.Session, error) {
	sess := sessions.NewSession(st, name)
	opts := st.m.options(r)
	sess.Options = &opts
	sess.IsNew = true
	c, err := r.Cookie(name)
	if err != nil || c.Value == "" {
		return sess, nil
	}
	if err := st.m.ready(); err != nil {
		return sess, err
	}
	var id string
	if err := st.m.codec.Decode(name, c.Value, &id); err != nil || !validSessionID(id) {
		return sess, nil
	}
	ctx, cancel := storeContext(r)
	defer cancel()
	data, err := st.m.backend.Load(ctx, id)
	if errors.Is(err, ErrSessionNotFound) {
		return sess, nil
	}
	if err != nil {
		return sess, fmt.Errorf("zealgo: session load: %w", err)
	}
	var vals map[string]any
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&vals); err != nil {
		return sess, fmt.Errorf("zealgo: session %s… is unreadable: %w", id[:6], err)
	}
	for k, v := range vals {
		sess.Values[k] = v
	}
	sess.ID, sess.IsNew = id, false
	return sess, nil
}

// Save saves sess and sets its cookie; a negative Options.MaxAge deletes
// it and clears the cookie.
func (st *serverStore) Save(r *http.Request, w http.ResponseWriter, sess *sessions.Session) error {
	if sess.Options != nil && sess.Options.MaxAge < 0 {
		if sess.ID != "" {
			if err := st.m.delete(r, sess.ID); err != nil {
				return err
			}
		}
		http.SetCookie(w, sessions.NewCookie(sess.Name(), "", sess.Options))
		return nil
	}
	if err := st.m.write(r, w, sess); err != nil {
		return err
	}
	if g := contextOf(r); g != nil {
		g.Session.savedBy(sess)
	}
	return nil
}

// SessionStore returns the application's session store, a gorilla
// sessions.Store, for code written against gorilla or echo-contrib's
// session package: session.Get in middleware adapted with EchoMiddleware
// returns the same session as api.G().Session. It is nil before the
// application starts.
func (a *App) SessionStore() sessions.Store {
	if a.sessions == nil {
		return nil
	}
	return a.sessions.store
}

// fileBackend keeps each session in a file named by its id, mode 0600:
// an 8-byte expiry time (Unix nanoseconds, big-endian) then the values.
// Expired files are removed when read and by a sweep at most hourly.
type fileBackend struct {
	dir string

	mu        sync.Mutex
	lastSweep time.Time
}

func (b *fileBackend) path(id string) (string, error) {
	if !validSessionID(id) {
		return "", ErrSessionNotFound
	}
	return filepath.Join(b.dir, id), nil
}

// Load implements SessionBackend.
func (b *fileBackend) Load(_ context.Context, id string) ([]byte, error) {
	p, err := b.path(id)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrSessionNotFound
	}
	if err != nil {
		return nil, err
	}
	if len(data) < 8 || time.Now().UnixNano() > int64(binary.BigEndian.Uint64(data)) {
		_ = os.Remove(p)
		return nil, ErrSessionNotFound
	}
	return data[8:], nil
}

// Save implements SessionBackend: written to a temporary file, then
// renamed over the old one.
func (b *fileBackend) Save(_ context.Context, id string, data []byte, ttl time.Duration) error {
	p, err := b.path(id)
	if err != nil {
		return fmt.Errorf("zealgo: bad session id")
	}
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(b.dir, ".tmp-*")
	if err != nil {
		return err
	}
	var head [8]byte
	binary.BigEndian.PutUint64(head[:], uint64(time.Now().Add(ttl).UnixNano()))
	_, err = f.Write(append(head[:], data...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	b.maybeSweep()
	return nil
}

// Delete implements SessionBackend.
func (b *fileBackend) Delete(_ context.Context, id string) error {
	p, err := b.path(id)
	if err != nil {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// maybeSweep removes expired session files in the background, at most
// once an hour.
func (b *fileBackend) maybeSweep() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(b.lastSweep) < time.Hour {
		return
	}
	b.lastSweep = time.Now()
	go b.sweep()
}

func (b *fileBackend) sweep() {
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return
	}
	now := time.Now().UnixNano()
	for _, e := range entries {
		if !validSessionID(e.Name()) {
			continue
		}
		p := filepath.Join(b.dir, e.Name())
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		var head [8]byte
		_, err = io.ReadFull(f, head[:])
		_ = f.Close()
		if err != nil || now > int64(binary.BigEndian.Uint64(head[:])) {
			_ = os.Remove(p)
		}
	}
}
