package sessionstore_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/sessions"

	"github.com/zealgo/zealgo/internal/sessionstore"
	"github.com/zealgo/zealgo/internal/testutil"
)

// newManager returns a Manager keeping sessions and a generated secret
// under dir.
func newManager(t *testing.T, dir string, edit ...func(*sessionstore.Config)) *sessionstore.Manager {
	t.Helper()
	cfg := sessionstore.Config{
		Backend:    sessionstore.NewFileBackend(filepath.Join(dir, "sessions")),
		SecretFile: filepath.Join(dir, "session.secret"),
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, e := range edit {
		e(&cfg)
	}
	m, err := sessionstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// save stores values in a new session of m and returns its cookie.
func save(t *testing.T, m *sessionstore.Manager, r *http.Request, values map[any]any) *http.Cookie {
	t.Helper()
	sess, err := m.Load(r)
	if err != nil || !sess.IsNew || sess.ID != "" {
		t.Fatalf("Load of a request without a cookie: %+v, %v", sess, err)
	}
	for k, v := range values {
		sess.Values[k] = v
	}
	rec := httptest.NewRecorder()
	if err := m.Save(r, rec, sess); err != nil {
		t.Fatal(err)
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("Save set %d cookies, want 1", len(cookies))
	}
	return cookies[0]
}

// load reads the session c names.
func load(t *testing.T, m *sessionstore.Manager, c *http.Cookie) *sessions.Session {
	t.Helper()
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(c)
	sess, err := m.Load(r)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// TestManagerRoundTrip: values saved through a cookie come back on the
// next request; the cookie holds the signed id only, with safe flags.
func TestManagerRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, dir)
	when := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	c := save(t, m, httptest.NewRequest("GET", "/", nil), map[any]any{
		"uid": 42, "name": "ann", "at": when, "tags": []any{"a", 1}, "m": map[string]any{"k": "v"}})
	if c.Name != "zealgo_session" || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" ||
		c.Secure || c.MaxAge != 14*24*3600 || strings.Contains(c.Value, "ann") {
		t.Errorf("cookie %+v", c)
	}
	sess := load(t, m, c)
	if sess.IsNew || len(sess.ID) != 43 || sess.Values["uid"] != 42 || sess.Values["name"] != "ann" ||
		!sess.Values["at"].(time.Time).Equal(when) || sess.Values["m"].(map[string]any)["k"] != "v" {
		t.Errorf("loaded %+v", sess)
	}
	fi, err := os.Stat(filepath.Join(dir, "session.secret"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file: %v %v, want mode 0600", fi, err)
	}
	tls := httptest.NewRequest("GET", "/", nil)
	tls.Header.Set("X-Forwarded-Proto", "HTTPS")
	// Behind a proxy the application trusts (Config.HTTPS says so).
	behindProxy := newManager(t, dir, func(c *sessionstore.Config) {
		c.HTTPS = func(r *http.Request) bool { return strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") }
	})
	if c := save(t, behindProxy, tls, map[any]any{"x": 1}); !c.Secure {
		t.Error("no Secure flag behind a TLS proxy")
	}
	// Without Config.HTTPS, no client's header is believed.
	if c := save(t, m, tls, map[any]any{"x": 1}); c.Secure {
		t.Error("Secure flag from an untrusted X-Forwarded-Proto")
	}
}

// TestManagerNoSecretUntilUsed: loading a request without a cookie makes
// no secret file.
func TestManagerNoSecretUntilUsed(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, dir)
	if sess, err := m.Load(httptest.NewRequest("GET", "/", nil)); err != nil || !sess.IsNew {
		t.Fatal(sess, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "session.secret")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("secret file made without a session: %v", err)
	}
}

// TestManagerBadCookies: a tampered cookie, a cookie signed with another
// secret and the cookie of a deleted session each give a new session.
func TestManagerBadCookies(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, dir)
	r := httptest.NewRequest("GET", "/", nil)
	good := save(t, m, r, map[any]any{"uid": 1})
	other := newManager(t, t.TempDir(), func(c *sessionstore.Config) { c.Secret = strings.Repeat("o", 32) })
	foreign := save(t, other, r, map[any]any{"uid": 2})
	tampered := *good
	tampered.Value = good.Value[:len(good.Value)-2] + "AA"
	deleted := save(t, m, r, map[any]any{"uid": 3})
	if err := m.Delete(r, load(t, m, deleted).ID); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*http.Cookie{"tampered": &tampered, "foreign": foreign, "deleted": deleted} {
		if sess := load(t, m, c); !sess.IsNew || sess.ID != "" || len(sess.Values) != 0 {
			t.Errorf("%s cookie: %+v, want a new session", name, sess)
		}
	}
	if sess := load(t, m, good); sess.Values["uid"] != 1 {
		t.Errorf("good cookie: %+v", sess)
	}
}

// TestManagerSharedSecretFile: managers that start at once on one data
// directory, as the processes of one application do, generate one secret
// between them and read each other's cookies.
func TestManagerSharedSecretFile(t *testing.T) {
	dir := t.TempDir()
	ms := make([]*sessionstore.Manager, 6)
	for i := range ms {
		ms[i] = newManager(t, dir)
	}
	cookies := make([]*http.Cookie, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func(i int, m *sessionstore.Manager) {
			defer wg.Done()
			sess, _ := m.Load(httptest.NewRequest("GET", "/", nil))
			sess.Values["i"] = i
			rec := httptest.NewRecorder()
			if err := m.Save(httptest.NewRequest("GET", "/", nil), rec, sess); err != nil {
				t.Error(err)
				return
			}
			cookies[i] = rec.Result().Cookies()[0]
		}(i, m)
	}
	wg.Wait()
	for i, c := range cookies {
		if c == nil {
			continue
		}
		for j, m := range ms {
			if sess := load(t, m, c); sess.Values["i"] != i {
				t.Errorf("manager %d reads manager %d's cookie as %+v", j, i, sess.Values)
			}
		}
	}
}

// TestManagerSecretErrors: a short secret is refused at once; a secret
// file that cannot be made fails the first save, naming the secret.
func TestManagerSecretErrors(t *testing.T) {
	_, err := sessionstore.New(sessionstore.Config{Backend: sessionstore.NewFileBackend(t.TempDir()), Secret: "short"})
	if err == nil || !strings.Contains(err.Error(), "at least 32") || !strings.HasPrefix(err.Error(), "zealgo: ") {
		t.Errorf("short secret: %v", err)
	}
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, t.TempDir(), func(c *sessionstore.Config) { c.SecretFile = filepath.Join(blocker, "session.secret") })
	sess, _ := m.Load(httptest.NewRequest("GET", "/", nil))
	sess.Values["x"] = 1
	err = m.Save(httptest.NewRequest("GET", "/", nil), httptest.NewRecorder(), sess)
	if err == nil || !strings.Contains(err.Error(), "zealgo: session secret") {
		t.Errorf("unwritable secret file: %v", err)
	}
}

// TestManagerSecretFileReadableByOthers: a secret file others may read is
// used, with a warning in the log.
func TestManagerSecretFileReadableByOthers(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "session.secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("k", 40)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &testutil.Buffer{}
	m := newManager(t, dir, func(c *sessionstore.Config) { c.Log = slog.New(slog.NewTextHandler(logs, nil)) })
	byFile := save(t, m, httptest.NewRequest("GET", "/", nil), map[any]any{"x": 1})
	if !strings.Contains(logs.String(), "readable by others") {
		t.Errorf("no warning; log: %s", logs)
	}
	// The file's secret, trimmed, is what signed the cookie.
	same := newManager(t, dir, func(c *sessionstore.Config) { c.Secret = strings.Repeat("k", 40) })
	if sess := load(t, same, byFile); sess.Values["x"] != 1 {
		t.Errorf("the file's secret was not used: %+v", sess)
	}
}

func withCookie(c *http.Cookie) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(c)
	return r
}

// TestManagerUnstorableValue: a value gob cannot encode is an error that
// says what to do.
func TestManagerUnstorableValue(t *testing.T) {
	m := newManager(t, t.TempDir())
	r := httptest.NewRequest("GET", "/", nil)
	sess, _ := m.Load(r)
	sess.Values["ch"] = make(chan int)
	if err := m.Save(r, httptest.NewRecorder(), sess); err == nil || !strings.Contains(err.Error(), "gob.Register") {
		t.Errorf("Save of a channel: %v", err)
	}
}

// failing is a Backend whose every call fails, and that counts Close.
type failing struct{ closed int }

var errDown = errors.New("backend down")

func (*failing) Load(context.Context, string) ([]byte, error)              { return nil, errDown }
func (*failing) Save(context.Context, string, []byte, time.Duration) error { return errDown }
func (*failing) Delete(context.Context, string) error                      { return errDown }
func (f *failing) Close() error                                            { f.closed++; return nil }

// TestManagerBackendFailure: backend errors reach the caller wrapped,
// with an empty session on load; Close closes the backend.
func TestManagerBackendFailure(t *testing.T) {
	dir := t.TempDir()
	c := save(t, newManager(t, dir), httptest.NewRequest("GET", "/", nil), map[any]any{"x": 1})
	f := &failing{}
	m, err := sessionstore.New(sessionstore.Config{Backend: f, SecretFile: filepath.Join(dir, "session.secret")})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := m.Load(withCookie(c))
	if !errors.Is(err, errDown) || !strings.HasPrefix(err.Error(), "zealgo: session load") || sess == nil || len(sess.Values) != 0 {
		t.Errorf("Load: %+v, %v", sess, err)
	}
	sess.Values["x"] = 2
	if err := m.Save(withCookie(c), httptest.NewRecorder(), sess); !errors.Is(err, errDown) {
		t.Errorf("Save: %v", err)
	}
	if err := m.Close(); err != nil || f.closed != 1 {
		t.Errorf("Close: %v, backend closed %d times", err, f.closed)
	}
	var none *sessionstore.Manager
	if err := none.Close(); err != nil {
		t.Errorf("Close of a nil Manager: %v", err)
	}
}

// TestStoreCurrentAndSaved: the gorilla store returns the session the
// caller holds for the request, tells the caller what it saved, and
// deletes a session saved with a negative MaxAge.
func TestStoreCurrentAndSaved(t *testing.T) {
	held := sessions.NewSession(nil, "zealgo_session")
	var saved []*sessions.Session
	m := newManager(t, t.TempDir(), func(c *sessionstore.Config) {
		c.Current = func(r *http.Request) *sessions.Session {
			if r.Header.Get("Held") != "" {
				return held
			}
			return nil
		}
		c.Saved = func(_ *http.Request, s *sessions.Session) { saved = append(saved, s) }
	})
	st := m.Store()
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Held", "1")
	if got, _ := st.Get(r, "zealgo_session"); got != held {
		t.Error("Get did not return the session the caller holds")
	}
	if got, _ := st.Get(r, "other"); got == held || !got.IsNew {
		t.Errorf("Get of another cookie name: %+v", got)
	}
	plain := httptest.NewRequest("GET", "/", nil)
	sess, _ := st.Get(plain, "zealgo_session")
	sess.Values["uid"] = 7
	rec := httptest.NewRecorder()
	if err := st.Save(plain, rec, sess); err != nil || len(saved) != 1 || saved[0] != sess {
		t.Fatalf("Save: %v, Saved told %v", err, saved)
	}
	c := rec.Result().Cookies()[0]
	if got := load(t, m, c); got.Values["uid"] != 7 {
		t.Fatalf("saved through the store: %+v", got)
	}
	gone := load(t, m, c)
	gone.Options.MaxAge = -1
	rec = httptest.NewRecorder()
	if err := st.Save(withCookie(c), rec, gone); err != nil {
		t.Fatal(err)
	}
	if cleared := rec.Result().Cookies(); len(cleared) != 1 || cleared[0].MaxAge >= 0 || cleared[0].Value != "" {
		t.Errorf("cookie after a delete: %+v", cleared)
	}
	if got := load(t, m, c); !got.IsNew {
		t.Errorf("a deleted session loads: %+v", got)
	}
	rec = httptest.NewRecorder()
	m.ClearCookie(rec, plain)
	if cleared := rec.Result().Cookies(); len(cleared) != 1 || cleared[0].Name != "zealgo_session" || cleared[0].MaxAge >= 0 {
		t.Errorf("ClearCookie: %+v", cleared)
	}
}
