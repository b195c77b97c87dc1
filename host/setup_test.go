package host_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// setupSource is a setup.go whose global middleware sets X-Setup to
// version, whose "guard" alias (When /api/admin) answers 401 without the
// header X-Key: k, whose auth checker trusts that header, and that provides
// a map[string]string.
const setupSource = `//go:build ignore

package main

import (
	"net/http"

	"github.com/zealgo/zealgo/host"
)

var setup = func(app *host.App) error {
	app.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Setup", "%s")
			next.ServeHTTP(w, r)
		})
	})
	app.MiddlewareAlias("guard", func(args ...string) (func(http.Handler) http.Handler, error) {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Key") != "k" {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				next.ServeHTTP(w, r)
			})
		}, nil
	})
	app.When("/api/admin", "guard")
	app.AuthChecker(func(g *host.RequestContext) bool { return g.Request.Header.Get("X-Key") == "k" })
	app.Provide(map[string]string{"greeting": "%s"})
	return nil
}
`

// setupFiles are the handler files the setup tests serve.
var setupFiles = map[string]string{
	"api/hello.go": `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var hello = func(api *host.API, cfg map[string]string) any {
	return map[string]any{"greeting": cfg["greeting"], "auth": api.IsAuthenticated()}
}
`,
	"api/admin/stats.go": `//go:build ignore

package main

var stats = func() any { return map[string]int{"n": 1} }
`,
}

// setupApp serves files with setup.go holding src.
func setupApp(t *testing.T, src string) *testApp {
	t.Helper()
	files := map[string]string{"setup.go": src}
	for k, v := range setupFiles {
		files[k] = v
	}
	return newTestApp(t, files)
}

// setupGet sends a GET with the given header pairs and returns the response and
// its body.
func setupGet(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestSetupFile: setup.go's global middleware, its alias in a When scope,
// its auth checker and its provided value all serve, on a stock App.
func TestSetupFile(t *testing.T) {
	ta := setupApp(t, fmt.Sprintf(setupSource, "v1", "hi"))
	resp, body := setupGet(t, ta.srv.URL+"/api/hello")
	if resp.StatusCode != 200 || resp.Header.Get("X-Setup") != "v1" || body != `{"auth":false,"greeting":"hi"}` {
		t.Fatalf("GET /api/hello: %d X-Setup=%q %s", resp.StatusCode, resp.Header.Get("X-Setup"), body)
	}
	if _, body := setupGet(t, ta.srv.URL+"/api/hello", "X-Key", "k"); body != `{"auth":true,"greeting":"hi"}` {
		t.Errorf("authenticated: %s", body)
	}
	if resp, _ := setupGet(t, ta.srv.URL+"/api/admin/stats"); resp.StatusCode != 401 {
		t.Errorf("/api/admin/stats without the key: %d, want 401 from the When scope", resp.StatusCode)
	}
	if resp, body := setupGet(t, ta.srv.URL+"/api/admin/stats", "X-Key", "k"); resp.StatusCode != 200 || body != `{"n":1}` {
		t.Errorf("/api/admin/stats with the key: %d %s", resp.StatusCode, body)
	}
	if resp, _ := setupGet(t, ta.srv.URL+"/missing.css"); resp.Header.Get("X-Setup") != "v1" {
		t.Errorf("a static path skipped the global middleware")
	}
}

// TestSetupFileReloadUnderLoad saves setup.go several times while clients
// keep asking: every answer is 200 from one generation or the next, none
// fails, and the last one arrives without a restart.
func TestSetupFileReloadUnderLoad(t *testing.T) {
	ta := setupApp(t, fmt.Sprintf(setupSource, "v0", "g0"))
	url := ta.srv.URL + "/api/hello"
	var stop atomic.Bool
	var failures, served atomic.Int64
	var bad sync.Map
	var wg sync.WaitGroup
	for c := 0; c < 6; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				resp, err := http.Get(url)
				if err != nil {
					failures.Add(1)
					bad.Store(err.Error(), true)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				served.Add(1)
				v := resp.Header.Get("X-Setup")
				if resp.StatusCode != 200 || !strings.HasPrefix(v, "v") ||
					string(b) != `{"auth":false,"greeting":"g`+v[1:]+`"}` && !strings.HasPrefix(string(b), `{"auth":false,"greeting":"g`) {
					failures.Add(1)
					bad.Store(fmt.Sprintf("%d %s %s", resp.StatusCode, v, b), true)
				}
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	testutil.WaitFor(t, 10*time.Second, "the clients' first answers", func() bool { return served.Load() >= 6 })
	for v := 1; v <= 4; v++ {
		src := fmt.Sprintf(setupSource, fmt.Sprintf("v%d", v), fmt.Sprintf("g%d", v))
		if err := os.WriteFile(filepath.Join(ta.root, "setup.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"auth":false,"greeting":"g%d"}`, v)
		testutil.WaitFor(t, 10*time.Second, "generation "+want, func() bool {
			resp, body := setupGet(t, url)
			return resp.Header.Get("X-Setup") == fmt.Sprintf("v%d", v) && body == want
		})
	}
	stop.Store(true)
	wg.Wait()
	if n := failures.Load(); n != 0 {
		var msgs []string
		bad.Range(func(k, _ any) bool { msgs = append(msgs, k.(string)); return true })
		t.Fatalf("%d of %d requests failed across setup.go saves: %v", n, served.Load(), msgs)
	}
	t.Logf("%d requests across 4 setup.go saves, 0 failed", served.Load())
}

// TestSetupFileBrokenEdit: an edit of setup.go that does not compile, or
// returns an error, leaves the running generation serving and is logged
// with its file and line; the next good edit serves.
func TestSetupFileBrokenEdit(t *testing.T) {
	ta := setupApp(t, fmt.Sprintf(setupSource, "v1", "hi"))
	path := filepath.Join(ta.root, "setup.go")
	broken := strings.Replace(fmt.Sprintf(setupSource, "v2", "hi"), "return nil", "return nil +", 1)
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the failed reload in the log", func() bool {
		return strings.Contains(ta.logs.String(), "setup.go: reload failed")
	})
	if !strings.Contains(ta.logs.String(), "setup.go:") {
		t.Errorf("the log does not name the file and line:\n%s", ta.logs.String())
	}
	if resp, _ := setupGet(t, ta.srv.URL+"/api/hello"); resp.StatusCode != 200 || resp.Header.Get("X-Setup") != "v1" {
		t.Fatalf("after a broken edit: %d X-Setup=%q, want the previous generation", resp.StatusCode, resp.Header.Get("X-Setup"))
	}
	if err := os.WriteFile(path, []byte(fmt.Sprintf(setupSource, "v3", "hi")), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the good edit", func() bool {
		resp, _ := setupGet(t, ta.srv.URL+"/api/hello")
		return resp.Header.Get("X-Setup") == "v3"
	})
}

// TestSetupFileRefusedCall: a call fixed at start-up is refused with an
// error naming it, at start and when setup.go changes while serving.
func TestSetupFileRefusedCall(t *testing.T) {
	refused := `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var setup = func(app *host.App) error {
	app.Configure(host.WithAddr(":9999"))
	return nil
}
`
	root := testutil.WriteTree(t, map[string]string{"setup.go": refused})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, 0))
	app.Symbols(symbols.Symbols)
	_, err := app.Handler()
	if err == nil || !strings.Contains(err.Error(), "setup.go: app.Configure cannot change while serving") {
		t.Fatalf("start with a refused call: %v", err)
	}
	app.Close()

	ta := setupApp(t, fmt.Sprintf(setupSource, "v1", "hi"))
	if err := os.WriteFile(filepath.Join(ta.root, "setup.go"), []byte(refused), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the refusal in the log", func() bool {
		return strings.Contains(ta.logs.String(), "app.Configure cannot change while serving")
	})
	if resp, _ := setupGet(t, ta.srv.URL+"/api/hello"); resp.Header.Get("X-Setup") != "v1" {
		t.Errorf("after a refused call the previous generation stopped serving")
	}
}

// TestAllowOriginFlag: serve --allow-origin answers a CORS preflight from
// the origin, with credentials, and trusts it for a POST, which another
// origin's POST is refused; an origin that is none stops the start-up.
func TestAllowOriginFlag(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"api/echo.go": corsEcho})
	base := runServe(t, root, "--data", t.TempDir(), "--allow-origin", "https://front.example,http://localhost:5173")
	req, _ := http.NewRequest(http.MethodOptions, base+"/api/echo", nil)
	req.Header.Set("Origin", "https://front.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,x-custom")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header
	if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "https://front.example" ||
		h.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "x-custom") || h.Get("Access-Control-Max-Age") != "600" {
		t.Errorf("preflight: %d %v", resp.StatusCode, h)
	}
	for origin, want := range map[string]int{"http://localhost:5173": 200, "https://evil.example": 403} {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/echo", strings.NewReader(`{"a":1}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		allowed := resp.Header.Get("Access-Control-Allow-Origin")
		if resp.StatusCode != want || (want == 200) != (allowed == origin) {
			t.Errorf("POST from %s: %d, Access-Control-Allow-Origin %q; want %d", origin, resp.StatusCode, allowed, want)
		}
	}

	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, 0))
	stderr := &testutil.Buffer{}
	code := app.Run(context.Background(), []string{"serve", "--addr", testutil.FreeAddr(t), "--data", t.TempDir(),
		"--allow-origin", "https://front.example/app"}, io.Discard, stderr)
	if code == 0 || !strings.Contains(stderr.String(), `allowed origin "https://front.example/app" is no origin`) {
		t.Errorf("serve --allow-origin with a path: exit %d, %s", code, stderr.String())
	}
}

// TestSetupFileCheck: zealgo check compiles setup.go and names its
// problems: a compile error with its line, a setup variable of the wrong
// type.
func TestSetupFileCheck(t *testing.T) {
	for src, want := range map[string]string{
		"//go:build ignore\n\npackage main\n\nvar setup = func(app *host.App) error { return nil }\n": "setup.go:5:",
		"//go:build ignore\n\npackage main\n\nvar setup = 3\n":                                        "setup.go:5:5: setup is a int, not a func(app *host.App) error",
		fmt.Sprintf(setupSource, "v", "g"):                                                            "",
	} {
		root := testutil.WriteTree(t, map[string]string{"setup.go": src})
		app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, 0))
		app.Symbols(symbols.Symbols)
		problems, files, err := app.Check()
		if err != nil || files != 1 {
			t.Fatalf("check: %d files, %v", files, err)
		}
		got := strings.Join(problems, "\n")
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("check of\n%s: %q, want %q", src, got, want)
		}
	}
}
