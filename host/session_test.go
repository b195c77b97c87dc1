package host_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v5"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// sessionFiles are handler files that use the session through api.G().
var sessionFiles = map[string]string{
	"api/s/set.go": handlerFile("set", `s := api.G().Session
	s.Set("user_id", int64(42))
	s.Set("name", api.String("name"))
	s.Set("n", 3)
	s.Set("f", 5.0)
	s.Set("half", 2.5)
	return map[string]any{"id": s.ID()}`),
	"api/s/get.go": handlerFile("get", `s := api.G().Session
	uid, ok := s.Int64("user_id")
	n, _ := s.Int64("n")
	f, _ := s.Int64("f")
	_, halfOK := s.Int64("half")
	_, nameOK := s.Int64("name")
	return map[string]any{"uid": uid, "ok": ok, "name": s.String("name"), "n": n, "f": f,
		"half_int": halfOK, "name_int": nameOK, "id": s.ID()}`),
	"api/s/rotate.go": handlerFile("rotate", `s := api.G().Session
	if err := s.Rotate(); err != nil {
		return err
	}
	return map[string]any{"id": s.ID()}`),
	"api/s/destroy.go": handlerFile("destroy", `if err := api.G().Session.Destroy(); err != nil {
		return err
	}
	return map[string]any{"id": api.G().Session.ID()}`),
	"api/s/del.go": handlerFile("del", `api.G().Session.Delete(api.String("key"))
	return map[string]any{"ok": true}`),
	"api/s/none.go": handlerFile("none", `return map[string]any{"untouched": true}`),
}

// sessionApp serves sessionFiles from a fresh root with the given data
// directory and options, until the test ends.
func sessionApp(t *testing.T, dataDir string, tlsServer bool, opts ...host.Option) (url string, app *host.App, client *http.Client) {
	t.Helper()
	url, app, client, _ = sessionAppStop(t, dataDir, tlsServer, opts...)
	return url, app, client
}

// sessionAppStop is sessionApp with a func that stops the server and
// closes the App before the test ends, as a process exiting would.
func sessionAppStop(t *testing.T, dataDir string, tlsServer bool, opts ...host.Option) (url string, app *host.App, client *http.Client, stop func()) {
	t.Helper()
	root := testutil.WriteTree(t, sessionFiles)
	opts = append([]host.Option{host.WithRoot(root), host.WithDataDir(dataDir),
		host.WithLogOutput(io.Discard, slog.LevelError)}, opts...)
	app = host.New(opts...)
	app.Symbols(symbols.Symbols)
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	var srv *httptest.Server
	if tlsServer {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			srv.Close()
			if err := app.Close(); err != nil {
				t.Errorf("closing the app: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return srv.URL, app, srv.Client(), stop
}

// sessionCookie returns the session cookie a response sets, or nil.
func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == "zealgo_session" {
			return c
		}
	}
	return nil
}

func sget(t *testing.T, c *http.Client, url string, ck *http.Cookie) (*http.Response, string) {
	t.Helper()
	if ck == nil {
		return do(t, c, "GET", url, nil)
	}
	return do(t, c, "GET", url, nil, "Cookie", ck.Name+"="+ck.Value)
}

// TestSessionSurvivesRequestsAndRestart: values survive requests and a
// restart (the first App closed, a new one on the same data directory);
// deleting the last value ends the session, for good.
func TestSessionSurvivesRequestsAndRestart(t *testing.T) {
	t.Setenv(host.SessionSecretEnv, "")
	t.Setenv(host.SessionRedisEnv, "")
	data := t.TempDir()
	url, _, c, stop := sessionAppStop(t, data, false)

	// A request that never touches the session pays nothing: no cookie, no secret.
	resp, _ := sget(t, c, url+"/api/s/none", nil)
	if resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("untouched session set a cookie: %q", resp.Header.Get("Set-Cookie"))
	}
	if _, err := os.Stat(filepath.Join(data, "session.secret")); err == nil {
		t.Error("a request without a session generated the secret")
	}

	resp, body := sget(t, c, url+"/api/s/set?name=ann", nil)
	ck := sessionCookie(resp)
	if ck == nil {
		t.Fatalf("set: no session cookie; %v %s", resp.Header, body)
	}
	want := `"f":5,"half_int":false,"id":"`
	for i := range 2 {
		_, body = sget(t, c, url+"/api/s/get", ck)
		if !strings.Contains(body, `"uid":42`) || !strings.Contains(body, `"name":"ann"`) || !strings.Contains(body, `"n":3`) ||
			!strings.Contains(body, want) || !strings.Contains(body, `"name_int":false`) {
			t.Fatalf("get %d: %s", i, body)
		}
	}
	fi, err := os.Stat(filepath.Join(data, "session.secret"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v %v, want mode 0600", err, fi)
	}
	sessionFileCount := func() int {
		t.Helper()
		ents, err := os.ReadDir(filepath.Join(data, "sessions"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				n++
			}
		}
		return n
	}
	if n := sessionFileCount(); n != 1 {
		t.Errorf("sessions dir holds %d files, want 1", n)
	}

	// A restart: the first App and its server stop, then a new App starts
	// on the same data directory, with the same secret and sessions.
	stop()
	if _, err := c.Get(url + "/api/s/none"); err == nil {
		t.Fatal("the first server still answers after it was stopped")
	}
	url, _, c, stop = sessionAppStop(t, data, false)
	_, body = sget(t, c, url+"/api/s/get", ck)
	if !strings.Contains(body, `"uid":42`) || !strings.Contains(body, `"name":"ann"`) || !strings.Contains(body, want) {
		t.Fatalf("after restart: %s", body)
	}

	// Deleting values one by one: the session lives on while one is left.
	if resp, body = sget(t, c, url+"/api/s/del?key=name", ck); resp.StatusCode != 200 || sessionCookie(resp) == nil {
		t.Fatalf("delete name: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if _, body = sget(t, c, url+"/api/s/get", ck); !strings.Contains(body, `"name":""`) || !strings.Contains(body, `"uid":42`) {
		t.Fatalf("after deleting name: %s", body)
	}
	for _, k := range []string{"n", "f", "half"} {
		sget(t, c, url+"/api/s/del?key="+k, ck)
	}
	if _, body = sget(t, c, url+"/api/s/get", ck); !strings.Contains(body, `"uid":42`) || !strings.Contains(body, `"n":0`) {
		t.Fatalf("with user_id left: %s", body)
	}
	// The last value: the session is removed from the store, its cookie cleared.
	resp, body = sget(t, c, url+"/api/s/del?key=user_id", ck)
	cleared := sessionCookie(resp)
	if resp.StatusCode != 200 || cleared == nil || cleared.MaxAge >= 0 || cleared.Value != "" {
		t.Fatalf("delete the last value: %d cookie %+v %s", resp.StatusCode, cleared, body)
	}
	if n := sessionFileCount(); n != 0 {
		t.Errorf("sessions dir holds %d files after the last value was deleted, want 0", n)
	}
	noSession := `"ok":false,"uid":0`
	if _, body = sget(t, c, url+"/api/s/get", ck); !strings.Contains(body, `"id":""`) || !strings.Contains(body, noSession) ||
		!strings.Contains(body, `"name":""`) {
		t.Fatalf("the next request after deleting the last value: %s", body)
	}
	// And after another restart, the old cookie still finds nothing.
	stop()
	url, _, c, _ = sessionAppStop(t, data, false)
	if resp, body = sget(t, c, url+"/api/s/get", ck); !strings.Contains(body, `"id":""`) || !strings.Contains(body, noSession) ||
		sessionCookie(resp) != nil {
		t.Fatalf("after the last value was deleted and a restart: %v %s", resp.Header, body)
	}
}

func TestSessionRotateAndDestroy(t *testing.T) {
	url, _, c := sessionApp(t, t.TempDir(), false, host.WithSessionSecret(strings.Repeat("r", 48)))
	resp, _ := sget(t, c, url+"/api/s/set?name=bo", nil)
	old := sessionCookie(resp)
	_, body := sget(t, c, url+"/api/s/get", old)
	oldID := between(body, `"id":"`, `"`)
	resp, body = sget(t, c, url+"/api/s/rotate", old)
	rotated := sessionCookie(resp)
	newID := between(body, `"id":"`, `"`)
	if rotated == nil || newID == "" || newID == oldID || rotated.Value == old.Value {
		t.Fatalf("rotate: cookie %v, id %q -> %q", rotated, oldID, newID)
	}
	if _, body = sget(t, c, url+"/api/s/get", rotated); !strings.Contains(body, `"uid":42`) || !strings.Contains(body, `"id":"`+newID+`"`) {
		t.Errorf("values lost on rotation: %s", body)
	}
	if _, body = sget(t, c, url+"/api/s/get", old); !strings.Contains(body, `"ok":false`) || !strings.Contains(body, `"id":""`) {
		t.Errorf("the old id still works: %s", body)
	}

	resp, body = sget(t, c, url+"/api/s/destroy", rotated)
	cleared := sessionCookie(resp)
	if cleared == nil || cleared.MaxAge >= 0 || cleared.Value != "" || !strings.Contains(body, `"id":""`) {
		t.Errorf("destroy: cookie %+v, body %s", cleared, body)
	}
	if _, body = sget(t, c, url+"/api/s/get", rotated); !strings.Contains(body, `"ok":false`) {
		t.Errorf("a destroyed session still works: %s", body)
	}
}

func TestSessionForgedAndTamperedCookies(t *testing.T) {
	data := t.TempDir()
	url, _, c := sessionApp(t, data, false, host.WithSessionSecret(strings.Repeat("a", 40)))
	resp, _ := sget(t, c, url+"/api/s/set?name=cy", nil)
	good := sessionCookie(resp)
	if _, body := sget(t, c, url+"/api/s/get", good); !strings.Contains(body, `"ok":true`) {
		t.Fatalf("good cookie: %s", body)
	}
	// The same session files under another secret: the signature fails.
	url2, _, c2 := sessionApp(t, data, false, host.WithSessionSecret(strings.Repeat("b", 40)))
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	ents, _ := os.ReadDir(filepath.Join(data, "sessions"))
	if len(ents) != 1 {
		t.Fatalf("%d session files", len(ents))
	}
	cases := []struct {
		name, url, value string
	}{
		{"tampered middle", url, flip(good.Value, len(good.Value)/2)},
		{"tampered end", url, flip(good.Value, len(good.Value)-2)},
		{"bare session id", url, ents[0].Name()},
		{"garbage", url, "not-a-cookie"},
		{"other secret", url2, good.Value},
	}
	for _, cs := range cases {
		cl := c
		if cs.url == url2 {
			cl = c2
		}
		resp, body := sget(t, cl, cs.url+"/api/s/get", &http.Cookie{Name: "zealgo_session", Value: cs.value})
		if resp.StatusCode != 200 || !strings.Contains(body, `"ok":false`) || !strings.Contains(body, `"id":""`) {
			t.Errorf("%s: %d %s, want no session", cs.name, resp.StatusCode, body)
		}
	}
}

func TestSessionCookieFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tls     bool
		hdr     []string
		secure  bool
		proxies []string // Config.TrustedProxies
	}{
		{"http", false, nil, false, nil}, {"tls", true, nil, true, nil},
		{"behind a TLS proxy", false, []string{"X-Forwarded-Proto", "https"}, true, []string{"127.0.0.1"}},
		{"X-Forwarded-Proto from an untrusted peer", false, []string{"X-Forwarded-Proto", "https"}, false, []string{"10.0.0.0/8"}},
		{"X-Forwarded-Proto with no trusted proxy", false, []string{"X-Forwarded-Proto", "https"}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _, c := sessionApp(t, t.TempDir(), tc.tls, host.WithSessionSecret(strings.Repeat("f", 40)),
				host.WithConfig(func(c *host.Config) { c.TrustedProxies = tc.proxies }))
			if tc.tls {
				c.Transport.(*http.Transport).TLSClientConfig.MinVersion = tls.VersionTLS12
			}
			resp, _ := do(t, c, "GET", url+"/api/s/set", nil, tc.hdr...)
			ck := sessionCookie(resp)
			if ck == nil {
				t.Fatal("no session cookie")
			}
			if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.Secure != tc.secure || ck.MaxAge <= 0 {
				t.Errorf("cookie %q: HttpOnly=%v SameSite=%v Path=%q Secure=%v MaxAge=%d", resp.Header.Get("Set-Cookie"),
					ck.HttpOnly, ck.SameSite, ck.Path, ck.Secure, ck.MaxAge)
			}
		})
	}
}

func TestSessionSecretConfig(t *testing.T) {
	t.Setenv(host.SessionSecretEnv, "short")
	app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError))
	_, err := app.Handler()
	app.Close()
	if err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("short secret: %v", err)
	}
	// A secret from the environment: nothing is written to the data dir.
	t.Setenv(host.SessionSecretEnv, strings.Repeat("e", 32))
	data := t.TempDir()
	url, _, c := sessionApp(t, data, false)
	resp, _ := sget(t, c, url+"/api/s/set", nil)
	if sessionCookie(resp) == nil {
		t.Fatal("no cookie")
	}
	if _, err := os.Stat(filepath.Join(data, "session.secret")); err == nil {
		t.Error("a secret file was generated although the environment gives one")
	}
}

// echoContribSessionGet is echo-contrib/v5's session.Get as it reads the
// store (echo-contrib/v5 is not in the module graph): the gorilla
// sessions.Store kept under the context key "_session_store".
func echoContribSessionGet(name string, c *echo.Context) (*sessions.Session, error) {
	s := c.Get("_session_store")
	if s == nil {
		return nil, fmt.Errorf("%q session store not found", "_session_store")
	}
	return s.(sessions.Store).Get(c.Request(), name)
}

// TestSessionEchoContrib: echo-contrib/v5's session.Get in an Echo v5
// middleware adapted by EchoMiddleware sees and changes the request's own
// session.
func TestSessionEchoContrib(t *testing.T) {
	ta := newTestAppWith(t, sessionFiles, func(a *host.App) {
		a.Use(host.EchoMiddleware(func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c *echo.Context) error {
				if c.Request().URL.Path != "/api/s/get" {
					return next(c)
				}
				sess, err := echoContribSessionGet("zealgo_session", c)
				if err != nil {
					return err
				}
				c.Response().Header().Set("X-Seen-Uid", fmt.Sprint(sess.Values["user_id"]))
				sess.Values["name"] = "from-echo"
				return next(c)
			}
		}))
	}, host.WithSessionSecret(strings.Repeat("c", 40)))
	resp, _ := sget(t, nil, ta.srv.URL+"/api/s/set?name=x", nil)
	ck := sessionCookie(resp)
	resp, body := sget(t, nil, ta.srv.URL+"/api/s/get", ck)
	if resp.Header.Get("X-Seen-Uid") != "42" || !strings.Contains(body, `"name":"from-echo"`) {
		t.Fatalf("echo-contrib session: X-Seen-Uid=%q body %s", resp.Header.Get("X-Seen-Uid"), body)
	}
}

func between(s, a, b string) string {
	_, rest, ok := strings.Cut(s, a)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, b)
	return v
}
