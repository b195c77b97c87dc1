// Package sessionstore is zealgo's session engine: a gorilla
// sessions.Store whose cookie holds only the session id, signed with a
// secret, while the values, encoded with encoding/gob, stay on the server
// in a Backend (files under a directory, Redis, or the application's own).
//
// The package knows nothing of zealgo's request pipeline: host gives each
// request a Session that loads, saves and deletes through a Manager, and
// tells the Manager, through Config.Current and Config.Saved, which
// session a request already holds, so that code written against gorilla
// or echo-contrib sees the same one.
package sessionstore

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"
)

// ErrNotFound is what a Backend returns for an id it does not hold, or
// holds no longer.
var ErrNotFound = errors.New("zealgo: session not found")

// Backend keeps encoded sessions on the server by id. Load returns
// ErrNotFound for an unknown or expired id; Save keeps data for ttl;
// Delete of an unknown id is not an error. A Backend that is also an
// io.Closer is closed by Manager.Close. Every method may be called by
// several goroutines at once.
type Backend interface {
	Load(ctx context.Context, id string) ([]byte, error)
	Save(ctx context.Context, id string, data []byte, ttl time.Duration) error
	Delete(ctx context.Context, id string) error
}

// Config configures a Manager.
type Config struct {
	// Backend keeps the sessions; required.
	Backend Backend
	// Secret signs the cookie; at least 32 characters. When empty, the
	// secret kept in SecretFile is used, generated there on first use.
	Secret     string
	SecretFile string
	// CookieName names the cookie. Default "zealgo_session".
	CookieName string
	// MaxAge is how long a session lasts after its last change. Default 14
	// days.
	MaxAge time.Duration
	// Log receives warnings and the note that a secret was generated.
	// Default slog.Default().
	Log *slog.Logger
	// Current, when set, returns the session the caller already loaded
	// for r under CookieName, or nil; Store().Get returns it instead of
	// loading another copy.
	Current func(r *http.Request) *sessions.Session
	// Saved, when set, is told that Store().Save saved sess for r.
	Saved func(r *http.Request, sess *sessions.Session)
	// HTTPS, when set, reports whether r reached the application over
	// TLS, directly or through a trusted proxy; the cookie is then
	// Secure. Default: r.TLS != nil (no proxy header is believed).
	HTTPS func(r *http.Request) bool
}

// Manager loads and saves sessions of one application.
type Manager struct {
	cfg   Config
	store *store

	once  sync.Once
	codec *securecookie.SecureCookie
	err   error
}

func init() {
	// Interface values must be registered with gob; these are the common
	// ones beyond the basic types gob knows.
	gob.Register(map[string]any{})
	gob.Register([]any{})
	gob.Register(time.Time{})
}

// New checks cfg and returns its Manager. The secret is read or generated
// on first use, so that an application that never uses a session makes no
// secret file.
func New(cfg Config) (*Manager, error) {
	if cfg.Backend == nil {
		return nil, errors.New("zealgo: sessions: no backend")
	}
	if cfg.CookieName == "" {
		cfg.CookieName = "zealgo_session"
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 14 * 24 * time.Hour
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if err := CheckSecret(cfg.Secret); err != nil {
		return nil, err
	}
	if cfg.Secret == "" && cfg.SecretFile == "" {
		return nil, errors.New("zealgo: sessions: neither a secret nor a file to keep one in")
	}
	m := &Manager{cfg: cfg}
	m.store = &store{m: m}
	return m, nil
}

// CheckSecret returns an error for a secret too short to sign cookies;
// "" (a secret kept in Config.SecretFile) passes.
func CheckSecret(secret string) error {
	if secret != "" && len(secret) < 32 {
		return fmt.Errorf("zealgo: the session secret is %d characters long; it needs at least 32", len(secret))
	}
	return nil
}

// CookieName returns the name of the session cookie.
func (m *Manager) CookieName() string { return m.cfg.CookieName }

// Store returns the Manager as a gorilla sessions.Store.
func (m *Manager) Store() sessions.Store { return m.store }

// Load returns the session named by r's cookie. A missing, forged,
// tampered, expired or unknown cookie gives a new, empty session (IsNew);
// an error comes with an empty session too.
func (m *Manager) Load(r *http.Request) (*sessions.Session, error) {
	return m.store.New(r, m.cfg.CookieName)
}

// Close closes the backend when it is an io.Closer; m may be nil.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	return CloseBackend(m.cfg.Backend)
}

// CloseBackend closes b when it is an io.Closer.
func CloseBackend(b Backend) error {
	if c, ok := b.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// ready makes the cookie codec, reading or generating the secret, once.
func (m *Manager) ready() error {
	m.once.Do(func() {
		secret := m.cfg.Secret
		if secret == "" {
			secret, m.err = loadSecret(m.cfg.SecretFile, m.cfg.Log)
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

// options returns the cookie options for a response to r: HttpOnly,
// SameSite=Lax, and Secure when r came over TLS (Config.HTTPS).
func (m *Manager) options(r *http.Request) sessions.Options {
	secure := r.TLS != nil
	if m.cfg.HTTPS != nil {
		secure = m.cfg.HTTPS(r)
	}
	return sessions.Options{
		Path:     "/",
		MaxAge:   int(m.cfg.MaxAge / time.Second),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   secure,
	}
}

// storeContext bounds a backend call; it outlives a client that went away.
func storeContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
}

// Delete removes the session id from the backend.
func (m *Manager) Delete(r *http.Request, id string) error {
	ctx, cancel := storeContext(r)
	defer cancel()
	return m.cfg.Backend.Delete(ctx, id)
}

// ClearCookie sets on w a cookie that makes the client drop its session
// cookie.
func (m *Manager) ClearCookie(w http.ResponseWriter, r *http.Request) {
	opts := m.options(r)
	opts.MaxAge = -1
	http.SetCookie(w, sessions.NewCookie(m.cfg.CookieName, "", &opts))
}

// Save keeps sess in the backend, giving it an id if it has none, and
// sets its cookie on w.
func (m *Manager) Save(r *http.Request, w http.ResponseWriter, sess *sessions.Session) error {
	if err := m.ready(); err != nil {
		return err
	}
	if sess.ID == "" {
		sess.ID = NewID()
	}
	data, err := encode(sess.Values)
	if err != nil {
		return err
	}
	ctx, cancel := storeContext(r)
	defer cancel()
	if err := m.cfg.Backend.Save(ctx, sess.ID, data, m.cfg.MaxAge); err != nil {
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

// NewID returns a new session id: 256 random bits, URL-safe.
func NewID() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// validID reports whether id has the shape NewID makes.
func validID(id string) bool {
	if len(id) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}
