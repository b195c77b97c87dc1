package host_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// handlerFile returns the source of api/<...>/name.go serving body for
// every method, with an optional middleware list.
func handlerFile(name, body string, mw ...string) string {
	src := "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n"
	if len(mw) > 0 {
		src += "var middleware = []string{\"" + strings.Join(mw, "\", \"") + "\"}\n\n"
	}
	return src + "var " + name + " = func(api *host.API) any {\n" + body + "\n}\n"
}

// recorder is middleware that records, in order, which layer ran.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (rc *recorder) mw(name string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc.mu.Lock()
			rc.log = append(rc.log, name)
			rc.mu.Unlock()
			r.Header.Add("X-Trace", name)
			next.ServeHTTP(w, r)
		})
	}
}

func (rc *recorder) take() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	s := strings.Join(rc.log, ",")
	rc.log = nil
	return s
}

// do sends a request and returns the response with its body read.
func do(t *testing.T, c *http.Client, method, url string, body io.Reader, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if c == nil {
		c = noRedirect
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// errCode returns the "error" member of a JSON error body.
func errCode(body string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(body), &m)
	s, _ := m["error"].(string)
	return s
}

const traceBody = `return map[string]any{"trace": api.Req.Header.Values("X-Trace")}`

func TestMiddlewareOrderScopesAndShortCircuit(t *testing.T) {
	rc := &recorder{}
	ta := newTestAppWith(t, map[string]string{
		"api/admin/users.go":      handlerFile("users", traceBody, "rec:file"),
		"api/administrators.go":   handlerFile("administrators", traceBody, "rec:file"),
		"api/admin/locked/one.go": handlerFile("one", traceBody, "rec:file"),
		"api/admin.go":            handlerFile("admin", traceBody),
	}, func(a *host.App) {
		a.MiddlewareAlias("rec", func(args ...string) (func(http.Handler) http.Handler, error) { return rc.mw(args[0]), nil })
		a.Use(rc.mw("global"))
		a.When("/api", "rec:api")
		a.When("/api/admin", "rec:admin")
		a.When("/api/admin/locked", "rec:locked", "deny", "rec:after-deny")
	})
	cases := []struct {
		path, trace, log string
		status           int
	}{
		{"/api/admin/users", `["global","api","admin","file"]`, "global,api,admin,file", 200},
		{"/api/administrators", `["global","api","file"]`, "global,api,file", 200},
		{"/api/admin", `["global","api","admin"]`, "global,api,admin", 200},
		// deny does not call next: nothing inside it runs, its answer stands.
		{"/api/admin/locked/one", "", "global,api,admin,locked", http.StatusTeapot},
	}
	for _, c := range cases {
		resp, body := do(t, nil, "GET", ta.srv.URL+c.path, nil)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d; body %s", c.path, resp.StatusCode, c.status, body)
		}
		if c.trace != "" && !strings.Contains(body, `"trace":`+c.trace) {
			t.Errorf("%s: body %s, want trace %s", c.path, body, c.trace)
		}
		if c.status == http.StatusTeapot && !strings.Contains(body, "denied") {
			t.Errorf("%s: body %q, want the middleware's own", c.path, body)
		}
		if got := rc.take(); got != c.log {
			t.Errorf("%s: layers ran %q, want %q", c.path, got, c.log)
		}
	}
}

func TestMiddlewarePreflightNotGated(t *testing.T) {
	files := map[string]string{"api/admin/users.go": handlerFile("users", `return map[string]any{"ok": true}`)}
	scoped := newTestAppWith(t, files, func(a *host.App) {
		a.When("/api", "cors:https://app.example")
		a.When("/api/admin", "deny")
	})
	global := newTestAppWith(t, files, func(a *host.App) {
		a.UseAlias("cors:https://app.example")
		a.When("/api/admin", "deny")
	})
	for name, ta := range map[string]*testApp{"cors in When": scoped, "cors in UseAlias": global} {
		u := ta.srv.URL + "/api/admin/users"
		// A plain OPTIONS: the dispatcher's answer, guard not run.
		resp, body := do(t, nil, "OPTIONS", u, nil)
		if resp.StatusCode != 204 || resp.Header.Get("Allow") == "" {
			t.Errorf("%s: OPTIONS: %d Allow=%q %s", name, resp.StatusCode, resp.Header.Get("Allow"), body)
		}
		// A CORS preflight: answered by cors, guard not run.
		resp, body = do(t, nil, "OPTIONS", u, nil, "Origin", "https://app.example",
			"Access-Control-Request-Method", "POST")
		if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
			t.Errorf("%s: preflight: %d %v %s", name, resp.StatusCode, resp.Header, body)
		}
		// Another origin gets no CORS grant.
		resp, _ = do(t, nil, "OPTIONS", u, nil, "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: preflight from another origin granted %q", name, resp.Header.Get("Access-Control-Allow-Origin"))
		}
		// The guard still holds for the real request.
		resp, _ = do(t, nil, "GET", u, nil, "Origin", "https://app.example")
		if resp.StatusCode != http.StatusTeapot {
			t.Errorf("%s: GET past the guard: %d", name, resp.StatusCode)
		}
	}
}

func TestMiddlewareUnknownAlias(t *testing.T) {
	cases := []struct {
		name      string
		configure func(*host.App)
		want      string
	}{
		{"When", func(a *host.App) { a.When("/api/x", "nope") }, `unknown middleware alias "nope"`},
		{"UseAlias", func(a *host.App) { a.UseAlias("nada:1") }, `unknown middleware alias "nada"`},
		{"bad rate", func(a *host.App) { a.When("/api", "rate-limit:fast") }, `"rate-limit:fast": rate-limit: "fast" is not`},
		{"bad size", func(a *host.App) { a.When("/api", "body-limit:lots") }, `"body-limit:lots"`},
		{"bad timeout", func(a *host.App) { a.When("/api", "timeout:soon") }, `timeout: "soon"`},
		{"no credentials", func(a *host.App) { a.When("/api", "basic-auth") }, "basic-auth has no credentials"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(host.BasicAuthEnv, "")
			app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError))
			c.configure(app)
			_, err := app.Handler()
			defer app.Close()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("start-up error %v, want one containing %s", err, c.want)
			}
		})
	}
	// In a handler file's list: a clear 500 naming the alias and the file.
	ta := newTestApp(t, map[string]string{"api/mw/bad.go": handlerFile("bad", `return 1`, "nope:1")})
	resp, body := do(t, nil, "GET", ta.srv.URL+"/api/mw/bad", nil)
	if resp.StatusCode != 500 || errCode(body) != "unknown_middleware" ||
		!strings.Contains(body, "api/mw/bad.go") || !strings.Contains(body, `nope:1`) {
		t.Fatalf("unknown alias in a file: %d %s", resp.StatusCode, body)
	}
}

func TestMiddlewareReadyAliases(t *testing.T) {
	t.Setenv(host.BasicAuthEnv, "env-user:env-pass")
	echoBody := `return map[string]any{"id": api.Req.Header.Get("X-Request-Id"), "n": len(api.Req.Body()), "text": strings.Repeat("zealgo ", 200)}`
	src := func(name string, mw ...string) string {
		return strings.Replace(handlerFile(name, echoBody, mw...), `import "github.com/zealgo/zealgo/host"`,
			"import (\n\t\"strings\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)", 1)
	}
	ta := newTestAppWith(t, map[string]string{
		"api/rid.go":    src("rid", "request-id"),
		"api/limit.go":  src("limit", "body-limit:16"),
		"api/rate.go":   src("rate", "rate-limit:0.001"),
		"api/basic.go":  src("basic", "basic-auth:staff"),
		"api/gz.go":     src("gz", "gzip"),
		"api/secure.go": src("secure", "secure-headers"),
		"api/slow.go": handlerFile("slow", `<-api.Context().Done()
	return map[string]any{"late": true}`, "timeout:50ms"),
		"api/mine.go":        src("mine", "secure-headers:mine"),
		"api/cors.go":        src("cors", "cors"),
		"api/corsone.go":     src("corsone", "cors:https://app.example"),
		"api/anyorigin/x.go": src("x"),
	}, func(a *host.App) {
		// A preflight reaches cors in a When scope, not in a file's list.
		a.When("/api/anyorigin", "cors")
		// An application may replace a ready alias; here, with args.
		a.MiddlewareAlias("secure-headers", func(args ...string) (func(http.Handler) http.Handler, error) {
			return func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("X-Mine", strings.Join(args, "+"))
					next.ServeHTTP(w, r)
				})
			}, nil
		})
	}, host.WithBasicAuth("ann", "s3cret"))
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	u := ta.srv.URL + "/api/"

	// request-id: the handler sees the id the response carries.
	resp, body := do(t, nil, "GET", u+"rid", nil)
	if id := resp.Header.Get("X-Request-Id"); id == "" || !strings.Contains(body, `"id":"`+id+`"`) {
		t.Errorf("request-id: header %q, body %.80s", id, body)
	}
	resp, body = do(t, nil, "GET", u+"rid", nil, "X-Request-Id", "abc-123")
	if resp.Header.Get("X-Request-Id") != "abc-123" || !strings.Contains(body, `"id":"abc-123"`) {
		t.Errorf("request-id kept: %q %.80s", resp.Header.Get("X-Request-Id"), body)
	}

	// body-limit: by Content-Length and by what is read (chunked).
	resp, body = do(t, nil, "POST", u+"limit", strings.NewReader("small=1"))
	if resp.StatusCode != 200 {
		t.Errorf("body-limit small: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, nil, "POST", u+"limit", strings.NewReader(strings.Repeat("x", 100)))
	if resp.StatusCode != 413 || errCode(body) != "request_too_large" {
		t.Errorf("body-limit: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, nil, "POST", u+"limit", io.MultiReader(strings.NewReader(strings.Repeat("y", 100))))
	if resp.StatusCode != 413 || errCode(body) != "request_too_large" {
		t.Errorf("body-limit chunked: %d %s", resp.StatusCode, body)
	}

	// rate-limit: one token per 1000 s, so the second request is refused.
	if resp, body = do(t, nil, "GET", u+"rate", nil); resp.StatusCode != 200 {
		t.Errorf("rate-limit first: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, nil, "GET", u+"rate", nil)
	if resp.StatusCode != 429 || errCode(body) != "too_many_requests" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("rate-limit second: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	// basic-auth: from Config and from the environment.
	for _, c := range []struct {
		user, pass string
		status     int
	}{{"", "", 401}, {"ann", "wrong", 401}, {"bob", "s3cret", 401}, {"ann", "s3cret", 200}, {"env-user", "env-pass", 200}} {
		req, _ := http.NewRequest("GET", u+"basic", nil)
		if c.user != "" {
			req.SetBasicAuth(c.user, c.pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("basic-auth %s:%s: %d %s", c.user, c.pass, resp.StatusCode, b)
		}
		if c.status == 401 && (resp.Header.Get("WWW-Authenticate") != `basic realm="staff"` || errCode(string(b)) != "unauthorized") {
			t.Errorf("basic-auth 401: %v %s", resp.Header, b)
		}
	}

	// gzip: compressed for a client that accepts it, plain otherwise.
	resp, body = do(t, raw, "GET", u+"gz", nil, "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	} else {
		zr, err := gzip.NewReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := io.ReadAll(zr)
		if !strings.Contains(string(plain), "zealgo zealgo") || len(body) >= len(plain) {
			t.Errorf("gzip: %d compressed bytes for %d: %.60s", len(body), len(plain), plain)
		}
	}
	if resp, _ = do(t, raw, "GET", u+"gz", nil); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip without Accept-Encoding: %q", resp.Header.Get("Content-Encoding"))
	}

	// timeout: the handler waits for its context, which the timeout ends.
	resp, body = do(t, nil, "GET", u+"slow", nil)
	if resp.StatusCode != 503 || errCode(body) != "service_unavailable" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("timeout: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	// cors with no arguments allows any origin, without credentials; the
	// real request runs the handler and carries the CORS headers.
	resp, body = do(t, nil, "GET", u+"cors", nil, "Origin", "https://any.example")
	if resp.StatusCode != 200 || !strings.Contains(body, `"text":"zealgo`) ||
		resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Credentials") != "" ||
		!strings.Contains(resp.Header.Get("Vary"), "Origin") {
		t.Errorf("cors GET: %d %v %.60s", resp.StatusCode, resp.Header, body)
	}
	resp, _ = do(t, nil, "OPTIONS", u+"anyorigin/x", nil, "Origin", "https://any.example", "Access-Control-Request-Method", "PUT")
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "PUT") || resp.Header.Get("Access-Control-Max-Age") != "600" {
		t.Errorf("cors preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body = do(t, nil, "GET", u+"anyorigin/x", nil, "Origin", "https://other.example")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("cors in When, GET: %d %v %.60s", resp.StatusCode, resp.Header, body)
	}
	// A request without Origin is no CORS request: no grant.
	if resp, _ = do(t, nil, "GET", u+"cors", nil); resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("cors GET without Origin: %d %v", resp.StatusCode, resp.Header)
	}
	// cors with an origin: that origin, with credentials, on the real GET;
	// another origin is served but gets no grant.
	resp, body = do(t, nil, "GET", u+"corsone", nil, "Origin", "https://app.example")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("cors:origin GET: %d %v %.60s", resp.StatusCode, resp.Header, body)
	}
	resp, _ = do(t, nil, "GET", u+"corsone", nil, "Origin", "https://evil.example")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("cors:origin GET from another origin: %d %v", resp.StatusCode, resp.Header)
	}

	// secure-headers replaced by the application's own alias.
	resp, _ = do(t, nil, "GET", u+"mine", nil)
	if resp.Header.Get("X-Mine") != "mine" {
		t.Errorf("overridden alias: X-Mine %q", resp.Header.Get("X-Mine"))
	}
}

func TestMiddlewareSecureHeadersAndEchoAdapter(t *testing.T) {
	ok := handlerFile("ok", `return map[string]any{"ok": true}`)
	ta := newTestAppWith(t, map[string]string{"api/ok.go": ok, "api/guarded/x.go": handlerFile("x", `return map[string]any{"ok": true}`)},
		func(a *host.App) {
			a.UseAlias("secure-headers")
			// An Echo middleware that refuses with an error gets the JSON envelope.
			a.MiddlewareAlias("key", func(args ...string) (func(http.Handler) http.Handler, error) {
				return host.EchoMiddleware(func(next echo.HandlerFunc) echo.HandlerFunc {
					return func(c *echo.Context) error {
						if c.Request().Header.Get("X-Key") != args[0] {
							return echo.NewHTTPError(http.StatusForbidden, "wrong key")
						}
						return next(c)
					}
				}), nil
			})
			a.When("/api/guarded", "key:k1")
		})
	// The same application over TLS: only there Strict-Transport-Security.
	h, err := ta.app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	tlsSrv := httptest.NewTLSServer(h)
	defer tlsSrv.Close()
	for _, tc := range []struct {
		name, url string
		client    *http.Client
		hsts      string
	}{
		{"http", ta.srv.URL, nil, ""},
		{"tls", tlsSrv.URL, tlsSrv.Client(), "max-age=31536000; includeSubdomains"},
	} {
		resp, _ := do(t, tc.client, "GET", tc.url+"/api/ok", nil)
		if resp.StatusCode != 200 || (tc.name == "tls") != (resp.TLS != nil) {
			t.Fatalf("secure-headers %s: %d, TLS %v", tc.name, resp.StatusCode, resp.TLS != nil)
		}
		for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "SAMEORIGIN",
			"X-Xss-Protection": "1; mode=block", "Referrer-Policy": "strict-origin-when-cross-origin",
			"Strict-Transport-Security": tc.hsts} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("secure-headers %s: %s = %q, want %q", tc.name, h, got, want)
			}
		}
	}
	resp, body := do(t, nil, "GET", ta.srv.URL+"/api/guarded/x", nil)
	if resp.StatusCode != 403 || errCode(body) != "forbidden" || !strings.Contains(body, "wrong key") {
		t.Errorf("echo error: %d %s", resp.StatusCode, body)
	}
	if resp, body = do(t, nil, "GET", ta.srv.URL+"/api/guarded/x", nil, "X-Key", "k1"); resp.StatusCode != 200 {
		t.Errorf("echo pass: %d %s", resp.StatusCode, body)
	}
}

// TestMiddlewareGlobalOnce checks that middleware given to UseAlias is
// instantiated once: a rate limiter keeps its state across requests.
func TestMiddlewareGlobalOnce(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"api/ok.go": handlerFile("ok", `return map[string]any{"ok": true}`)})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	app.UseAlias("rate-limit:0.001")
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	srv := newLoopback(t, h)
	codes := []int{}
	for range 3 {
		resp, _ := do(t, nil, "GET", srv+"/api/ok", nil)
		codes = append(codes, resp.StatusCode)
	}
	if codes[0] != 200 || codes[1] != 429 || codes[2] != 429 {
		t.Fatalf("statuses %v, want [200 429 429]", codes)
	}
}

// newLoopback serves h on loopback for the test and returns its URL.
func newLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
