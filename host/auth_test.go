package host_test

import (
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// authFiles are the handler files of the authentication tests.
var authFiles = map[string]string{
	"api/admin/stats.go": handlerFile("stats", `if !api.IsAdmin() {
		api.Response(map[string]any{"error": "admin_only"}, 403)
		return nil
	}
	return map[string]any{"stats": 42}`),
	"api/notes/create.go": handlerFile("create", `if !api.RequirePostAuth() {
		return nil
	}
	return map[string]any{"created": true}`),
	"api/login.go": handlerFile("login", `s := api.G().Session
	if err := s.Rotate(); err != nil {
		return err
	}
	s.Set("user_id", int64(7))
	return map[string]any{"ok": true}`),
	"api/logout.go": handlerFile("logout", `if err := api.G().Session.Destroy(); err != nil {
		return err
	}
	return map[string]any{"ok": true}`),
	"api/me.go": handlerFile("me", `name, ok := api.Username()
	return map[string]any{"auth": api.IsAuthenticated(), "admin": api.IsAdmin(), "name": name, "has_name": ok}`),
	"api/ctx.go": handlerFile("ctx", `g := api.G()
	return map[string]any{"method": g.Server["REQUEST_METHOD"], "remote": g.Server["REMOTE_ADDR"],
		"uri": g.Server["REQUEST_URI"], "custom": g.Server["HTTP_X_CUSTOM"], "mark": g.Server["X_MARK"],
		"q": g.Get.Get("q"), "f": g.Post.Get("f"), "c": g.Cookies["c"], "from_mw": g.Session.String("from_mw"), "auth": api.IsAuthenticated()}`),
}

func TestAuthAdminOnlyAndRequirePostAuth(t *testing.T) {
	ta := newTestAppWith(t, authFiles, func(a *host.App) {
		a.AuthChecker(func(g *host.RequestContext) bool { return g.Server["HTTP_X_USER"] != "" })
		a.AdminChecker(func(g *host.RequestContext) bool { return g.Server["HTTP_X_ROLE"] == "admin" })
	})
	cases := []struct {
		name, method, path string
		hdr                []string
		status             int
		code, body         string
	}{
		{"non-admin", "GET", "/api/admin/stats", []string{"X-User", "ann"}, 403, "admin_only", ""},
		{"anonymous", "GET", "/api/admin/stats", nil, 403, "admin_only", ""},
		{"admin", "GET", "/api/admin/stats", []string{"X-User", "root", "X-Role", "admin"}, 200, "", `{"stats":42}`},
		{"GET authenticated", "GET", "/api/notes/create", []string{"X-User", "ann"}, 403, "unauthorized", ""},
		{"POST unauthenticated", "POST", "/api/notes/create", nil, 403, "unauthorized", ""},
		{"POST authenticated", "POST", "/api/notes/create", []string{"X-User", "ann"}, 200, "", `{"created":true}`},
	}
	for _, c := range cases {
		resp, body := do(t, nil, c.method, ta.srv.URL+c.path, nil, c.hdr...)
		if resp.StatusCode != c.status || errCode(body) != c.code || c.body != "" && body != c.body {
			t.Errorf("%s: %d %s, want %d %q %s", c.name, resp.StatusCode, body, c.status, c.code, c.body)
		}
		if c.code == "unauthorized" && !strings.Contains(body, `"hint":`) {
			t.Errorf("%s: no hint in %s", c.name, body)
		}
	}
}

func TestAuthDefaultsAndNilClears(t *testing.T) {
	ta := newTestAppWith(t, authFiles, func(a *host.App) {
		a.AuthChecker(func(*host.RequestContext) bool { return true })
		a.UsernameProvider(func(*host.RequestContext) (string, bool) { return "x", true })
		a.AuthChecker(nil)
		a.UsernameProvider(nil)
	})
	_, body := do(t, nil, "GET", ta.srv.URL+"/api/me", nil)
	if body != `{"admin":false,"auth":false,"has_name":false,"name":""}` {
		t.Errorf("defaults: %s", body)
	}
	resp, body := do(t, nil, "POST", ta.srv.URL+"/api/notes/create", nil, "X-User", "ann")
	if resp.StatusCode != 403 || errCode(body) != "unauthorized" {
		t.Errorf("no checker: RequirePostAuth let through: %d %s", resp.StatusCode, body)
	}
}

// TestAuthCheckerReadsSessionPerRequest logs in and out against the same
// handler: the checker reads the session on each call.
func TestAuthCheckerReadsSessionPerRequest(t *testing.T) {
	var calls atomic.Int32
	ta := newTestAppWith(t, authFiles, func(a *host.App) {
		a.AuthChecker(func(g *host.RequestContext) bool {
			calls.Add(1)
			_, ok := g.Session.Int64("user_id")
			return ok
		})
		a.UsernameProvider(func(g *host.RequestContext) (string, bool) {
			id, ok := g.Session.Int64("user_id")
			return "user-" + strconv.FormatInt(id, 10), ok
		})
	}, host.WithSessionSecret(strings.Repeat("k", 40)))
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	me := func(want string) {
		t.Helper()
		if _, body := do(t, c, "GET", ta.srv.URL+"/api/me", nil); body != want {
			t.Errorf("me: %s, want %s", body, want)
		}
	}
	out := `{"admin":false,"auth":false,"has_name":false,"name":"user-0"}`
	in := `{"admin":false,"auth":true,"has_name":true,"name":"user-7"}`
	me(out)
	do(t, c, "POST", ta.srv.URL+"/api/login", nil)
	me(in)
	me(in)
	do(t, c, "POST", ta.srv.URL+"/api/logout", nil)
	me(out)
	if n := calls.Load(); n != 4 {
		t.Errorf("auth checker called %d times, want 4 (once per request)", n)
	}
}

// TestAuthContextSharedWithMiddleware: middleware, the auth callbacks and
// the handler see one RequestContext and one Session; server variables.
func TestAuthContextSharedWithMiddleware(t *testing.T) {
	ta := newTestAppWith(t, authFiles, func(a *host.App) {
		a.Use(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if g := host.RequestContextOf(r); g != nil && strings.HasPrefix(r.URL.Path, "/api/ctx") {
					g.Server["X_MARK"] = "mw"
					g.Session.Set("from_mw", "hello")
				}
				next.ServeHTTP(w, r)
			})
		})
		a.AuthChecker(func(g *host.RequestContext) bool { return g.Server["X_MARK"] == "mw" })
	}, host.WithSessionSecret(strings.Repeat("k", 40)))
	resp, body := do(t, nil, "POST", ta.srv.URL+"/api/ctx?q=1", strings.NewReader("f=2"),
		"Content-Type", "application/x-www-form-urlencoded", "X-Custom", "yes", "Cookie", "c=3")
	for _, want := range []string{`"method":"POST"`, `"remote":"127.0.0.1:`, `"uri":"/api/ctx?q=1"`, `"custom":"yes"`,
		`"mark":"mw"`, `"q":"1"`, `"f":"2"`, `"c":"3"`, `"from_mw":"hello"`, `"auth":true`} {
		if !strings.Contains(body, want) {
			t.Errorf("context: %s lacks %s", body, want)
		}
	}
	if !strings.Contains(resp.Header.Get("Set-Cookie"), "zealgo_session=") {
		t.Errorf("a session set by middleware was not saved: Set-Cookie %q", resp.Header.Get("Set-Cookie"))
	}
	if host.RequestContextOf(httptestRequest()) != nil {
		t.Error("Context of a request outside an App is not nil")
	}
}

func httptestRequest() *http.Request {
	r, _ := http.NewRequest("GET", "/", nil)
	return r
}
