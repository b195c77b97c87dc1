package host_test

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// rawRequest writes head (and body, then stalls) on a fresh connection to
// the test server and returns what the server sends until it closes the
// connection, or fails the test when it is still open after within.
func rawRequest(t *testing.T, base, head string, body []string, gap time.Duration, within time.Duration) string {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	for _, part := range body {
		time.Sleep(gap)
		if _, err := io.WriteString(c, part); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(within))
	got, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection is still open %v later; got so far %q", within, got)
	}
	return string(got)
}

// TestBodyTimeout: a body that stalls is cut after Config.BodyTimeout and
// its connection closed, whether the handler reads its input or not; a
// slow body that keeps moving is not (issue 14, failure 8).
func TestBodyTimeout(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"api/slow/reads.go":   handlerFile("reads", `return map[string]any{"a": api.Input["a"]}`),
		"api/slow/ignores.go": handlerFile("ignores", `return map[string]any{"ok": true}`),
	}, host.WithConfig(func(c *host.Config) { c.BodyTimeout = 300 * time.Millisecond }))
	head := func(path string, n int, extra string) string {
		return "POST /api/slow/" + path + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
			extra + "Content-Length: " + strconv.Itoa(n) + "\r\n\r\n"
	}
	t.Run("stalled, read", func(t *testing.T) {
		got := rawRequest(t, ta.srv.URL, head("reads", 1000, "")+"a=1", nil, 0, 10*time.Second)
		if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !strings.Contains(got, `"error":"request_timeout"`) {
			t.Errorf("got %q", got)
		}
	})
	t.Run("stalled, ignored", func(t *testing.T) {
		got := rawRequest(t, ta.srv.URL, head("ignores", 1000, "")+"a=1", nil, 0, 10*time.Second)
		if !strings.HasPrefix(got, "HTTP/1.1 200 ") {
			t.Errorf("got %q", got)
		}
	})
	t.Run("slow but moving", func(t *testing.T) {
		parts := strings.Split("a=slowly-sent", "")
		got := rawRequest(t, ta.srv.URL, head("reads", len(parts), "Connection: close\r\n"), parts, 100*time.Millisecond, 10*time.Second)
		if !strings.HasPrefix(got, "HTTP/1.1 200 ") || !strings.Contains(got, `"a":"slowly-sent"`) {
			t.Errorf("got %q", got)
		}
	})
}

// TestWriteTimeout: a stream that keeps flushing outlives
// Config.WriteTimeout, each flush moving the deadline; a client that stops
// reading is cut off after it, and the handler's stream ends.
func TestWriteTimeout(t *testing.T) {
	ta := newTestApp(t, writeTimeoutFiles(), host.WithConfig(func(c *host.Config) { c.WriteTimeout = 300 * time.Millisecond }))
	checkWriteTimeout(t, ta.srv.URL, ta.logs)
}

// writeTimeoutFiles are the handlers of the write timeout's tests.
func writeTimeoutFiles() map[string]string {
	return map[string]string{
		"api/w/trickle.go": `package main

import (
	"time"

	"github.com/zealgo/zealgo/host"
)

var trickle = func(api *host.API) any {
	return func(yield func(string) bool) {
		for i := 0; i < 10; i++ {
			time.Sleep(100 * time.Millisecond)
			if !yield("tick\n") {
				return
			}
		}
	}
}
`,
		"api/w/flood.go": `package main

import (
	"strings"

	"github.com/zealgo/zealgo/host"
)

var flood = func(api *host.API) any {
	chunk := strings.Repeat("x", 64<<10)
	return func(yield func(string) bool) {
		for yield(chunk) {
		}
		println("flood stopped")
	}
}
`,
		"api/w/slow.go": `package main

import (
	"time"

	"github.com/zealgo/zealgo/host"
)

var slow = func(api *host.API) any {
	time.Sleep(600 * time.Millisecond)
	return map[string]any{"done": true}
}
`,
	}
}

// checkWriteTimeout runs the checks of TestWriteTimeout on the server at
// base, whose log is logs.
func checkWriteTimeout(t *testing.T, base string, logs *testutil.Buffer) {
	t.Helper()
	// The time a handler computes before it answers does not count, and a
	// deadline does not outlive its response on a kept-alive connection.
	for i := 0; i < 2; i++ {
		if resp, body := do(t, nil, "GET", base+"/api/w/slow", nil); resp.StatusCode != 200 || body != `{"done":true}` {
			t.Fatalf("a handler slower than the write timeout: %d %q", resp.StatusCode, body)
		}
	}
	resp, err := http.Get(base + "/api/w/trickle")
	if err != nil {
		t.Fatal(err)
	}
	ticks := 0
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		ticks++
	}
	resp.Body.Close()
	if ticks != 10 {
		t.Errorf("a stream flushing every 100ms under a 300ms write timeout sent %d of 10 chunks", ticks)
	}

	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /api/w/flood HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing.
	testutil.WaitFor(t, 15*time.Second, "the stream to a client that reads nothing to stop", func() bool {
		return strings.Contains(logs.String(), "flood stopped")
	})
}

// TestCrossOriginProtection: unsafe requests that a browser sends from
// another origin are refused with 403; API clients that send neither
// Sec-Fetch-Site nor Origin, same-origin requests, safe methods and
// trusted origins pass (issue 14, failure 5).
func TestCrossOriginProtection(t *testing.T) {
	files := map[string]string{
		"api/co/act.go":   handlerFile("act", `return map[string]any{"done": api.Method()}`),
		"public/login.go": pageHead + "var login = func(api *host.API) string { return \"page \" + api.Method() }\n",
	}
	ta := newTestApp(t, files)
	trusted := newTestApp(t, files, host.WithConfig(func(c *host.Config) { c.TrustedOrigins = []string{"https://app.example"} }))
	off := newTestApp(t, files, host.WithConfig(func(c *host.Config) { c.TrustedOrigins = []string{"*"} }))
	self := ta.srv.URL
	for _, tc := range []struct {
		name   string
		base   string
		method string
		path   string
		hdr    []string
		status int
	}{
		{"API client, no browser headers", self, "POST", "/api/co/act", nil, 200},
		{"cross-site POST", self, "POST", "/api/co/act", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, 403},
		{"same-site, other origin", self, "DELETE", "/api/co/act", []string{"Sec-Fetch-Site", "same-site"}, 403},
		{"old browser, other Origin", self, "PUT", "/api/co/act", []string{"Origin", "https://evil.example"}, 403},
		{"same-origin POST", self, "POST", "/api/co/act", []string{"Sec-Fetch-Site", "same-origin", "Origin", self}, 200},
		{"old browser, own Origin", self, "POST", "/api/co/act", []string{"Origin", self}, 200},
		{"typed into the address bar", self, "POST", "/api/co/act", []string{"Sec-Fetch-Site", "none"}, 200},
		{"cross-site GET", self, "GET", "/api/co/act", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, 200},
		{"cross-site POST to a page", self, "POST", "/login", []string{"Sec-Fetch-Site", "cross-site", "Accept", "text/html"}, 403},
		{"trusted origin", trusted.srv.URL, "POST", "/api/co/act", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://app.example"}, 200},
		{"untrusted origin beside a trusted one", trusted.srv.URL, "POST", "/api/co/act", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, 403},
		{"protection off", off.srv.URL, "POST", "/api/co/act", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, nil, tc.method, tc.base+tc.path, strings.NewReader("a=1"),
				append([]string{"Content-Type", "application/x-www-form-urlencoded"}, tc.hdr...)...)
			if resp.StatusCode != tc.status {
				t.Fatalf("%d %.200s, want %d", resp.StatusCode, body, tc.status)
			}
			if tc.status != 403 {
				return
			}
			if strings.HasPrefix(tc.path, "/api/") && errCode(body) != host.CodeCrossOrigin {
				t.Errorf("body %s", body)
			}
			if !strings.HasPrefix(tc.path, "/api/") && !strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
				t.Errorf("a browser gets %s: %s", resp.Header.Get("Content-Type"), body)
			}
		})
	}
	app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError),
		host.WithConfig(func(c *host.Config) { c.TrustedOrigins = []string{"app.example"} }))
	defer app.Close()
	if _, err := app.Handler(); err == nil || !strings.Contains(err.Error(), "app.example") {
		t.Errorf("a malformed trusted origin starts: %v", err)
	}
}

// TestFrameHeaders: every page, file and error page says it may not be
// framed by another site, unless the handler says otherwise or the
// application changes Config.FrameAncestors (issue 14, failure 14); so
// does every /api/ response that is not JSON, whoever writes it, while
// JSON answers, which a frame has nothing to show of, go without.
func TestFrameHeaders(t *testing.T) {
	files := map[string]string{
		"api/f/json.go":     handlerFile("json", `return map[string]any{"ok": true}`),
		"api/f/problem.go":  handlerFile("problem", `api.Res.Header().Set("Content-Type", "application/problem+json"); return 418`),
		"api/f/html.go":     handlerFile("html", `return "<form method=post><button>Delete</button></form>"`),
		"api/f/raw.go":      handlerFile("raw", `api.Res.Write([]byte("plain words")); return nil`),
		"api/f/own.go":      handlerFile("own", `api.Res.Header().Set("X-Frame-Options", "SAMEORIGIN"); return "<p>mine</p>"`),
		"api/f/session.go":  handlerFile("session", `api.G().Session.Set("seen", 1); return "<p>seen</p>"`),
		"public/notes.go":   pageHead + "var notes = func(api *host.API) string { return \"<form method=post><button>Delete</button></form>\" }\n",
		"public/style.css":  "a{}",
		"public/embed.go":   pageHead + "var embed = func(api *host.API) string {\n\tapi.Res.Header().Set(\"Content-Security-Policy\", \"default-src 'self'\")\n\tapi.Res.Header().Set(\"X-Frame-Options\", \"SAMEORIGIN\")\n\treturn \"embed\"\n}\n",
		"public/missing.go": pageHead + "var missing = func(api *host.API) int { return 404 }\n",
	}
	check := func(t *testing.T, base, path, csp, xfo string) {
		t.Helper()
		resp, _ := do(t, nil, "GET", base+path, nil, "Accept", "text/html")
		if got := resp.Header.Values("Content-Security-Policy"); strings.Join(got, "|") != csp {
			t.Errorf("%s: Content-Security-Policy %q, want %q", path, got, csp)
		}
		if got := resp.Header.Values("X-Frame-Options"); strings.Join(got, "|") != xfo {
			t.Errorf("%s: X-Frame-Options %q, want %q", path, got, xfo)
		}
	}
	ta := newTestApp(t, files)
	for _, p := range []string{"/notes", "/style.css", "/missing", "/nothing/here", "/api/f/html", "/api/f/raw"} {
		check(t, ta.srv.URL, p, "frame-ancestors 'none'", "DENY")
	}
	for _, p := range []string{"/api/f/json", "/api/f/problem", "/api/f/nothing", "/api/f/json?x=1&x=2"} {
		check(t, ta.srv.URL, p, "", "")
	}
	check(t, ta.srv.URL, "/embed", "default-src 'self'", "SAMEORIGIN")
	check(t, ta.srv.URL, "/api/f/own", "frame-ancestors 'none'", "SAMEORIGIN")
	// A session's hook, added to the same response, runs beside the frames'.
	for range 3 {
		resp, _ := do(t, nil, "GET", ta.srv.URL+"/api/f/session", nil)
		if resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("Set-Cookie") == "" {
			t.Errorf("/api/f/session: X-Frame-Options %q, Set-Cookie %q", resp.Header.Get("X-Frame-Options"), resp.Header.Get("Set-Cookie"))
		}
		check(t, ta.srv.URL, "/api/f/json", "", "")
	}
	for _, tc := range []struct{ set, csp, xfo string }{
		{"'self'", "frame-ancestors 'self'", "SAMEORIGIN"},
		{"https://partner.example", "frame-ancestors https://partner.example", ""},
		{"", "", ""},
	} {
		other := newTestApp(t, files, host.WithConfig(func(c *host.Config) { c.FrameAncestors = tc.set }))
		check(t, other.srv.URL, "/notes", tc.csp, tc.xfo)
		check(t, other.srv.URL, "/api/f/html", tc.csp, tc.xfo)
		check(t, other.srv.URL, "/api/f/json", "", "")
	}
}

// TestTrustedProxies: X-Forwarded-For gives the client address (ClientIP,
// and the rate-limit alias) only when the peer is a trusted proxy (issue
// 14, failure 12; the Secure flag: TestSessionCookieFlags).
func TestTrustedProxies(t *testing.T) {
	files := map[string]string{
		"api/ip.go":      handlerFile("ip", `return map[string]any{"ip": api.ClientIP()}`),
		"api/limited.go": handlerFile("limited", `return map[string]any{"ip": api.ClientIP()}`, "rate-limit:0.001,1"),
	}
	none := newTestApp(t, files)
	other := newTestApp(t, files, host.WithConfig(func(c *host.Config) { c.TrustedProxies = []string{"10.0.0.0/8"} }))
	proxied := newTestApp(t, files, host.WithConfig(func(c *host.Config) { c.TrustedProxies = []string{"10.1.2.3", "127.0.0.0/8"} }))
	for _, tc := range []struct {
		name string
		base string
		xff  string
		want string
	}{
		{"no trusted proxy", none.srv.URL, "203.0.113.9", "127.0.0.1"},
		{"peer is not a trusted proxy", other.srv.URL, "203.0.113.9", "127.0.0.1"},
		{"behind a trusted proxy", proxied.srv.URL, "203.0.113.9", "203.0.113.9"},
		{"a forged hop before the client", proxied.srv.URL, "198.51.100.7, 203.0.113.9", "203.0.113.9"},
		{"through two trusted proxies", proxied.srv.URL, "203.0.113.9, 10.1.2.3", "203.0.113.9"},
		{"no header", proxied.srv.URL, "", "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.xff != "" {
				hdr = []string{"X-Forwarded-For", tc.xff}
			}
			resp, body := do(t, nil, "GET", tc.base+"/api/ip", nil, hdr...)
			if resp.StatusCode != 200 || body != `{"ip":"`+tc.want+`"}` {
				t.Errorf("%d %s, want %s", resp.StatusCode, body, tc.want)
			}
		})
	}
	// rate-limit counts per client: a new X-Forwarded-For is a new client
	// only behind a trusted proxy.
	for _, tc := range []struct {
		base   string
		second int
	}{{none.srv.URL, 429}, {proxied.srv.URL, 200}} {
		do(t, nil, "GET", tc.base+"/api/limited", nil, "X-Forwarded-For", "203.0.113.1")
		if resp, body := do(t, nil, "GET", tc.base+"/api/limited", nil, "X-Forwarded-For", "203.0.113.2"); resp.StatusCode != tc.second {
			t.Errorf("second client: %d %s, want %d", resp.StatusCode, body, tc.second)
		}
	}
	app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError),
		host.WithConfig(func(c *host.Config) { c.TrustedProxies = []string{"10.0.0.0/33"} }))
	defer app.Close()
	if _, err := app.Handler(); err == nil || !strings.Contains(err.Error(), "10.0.0.0/33") {
		t.Errorf("a malformed trusted proxy starts: %v", err)
	}
}
