package host_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// fetchOps fetches url and returns the status and body.
func fetchOps(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// readyBody is the readiness check's answer.
type readyBody struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

func readyz(t *testing.T, base string) (int, readyBody) {
	t.Helper()
	code, body := fetchOps(t, "GET", base+"/readyz")
	var rb readyBody
	if err := json.Unmarshal([]byte(body), &rb); err != nil {
		t.Fatalf("/readyz: %d %q: %v", code, body, err)
	}
	return code, rb
}

// TestReadinessDuringShutdown: a served application with task workers is
// ready (database and workers checked); from the start of a graceful
// shutdown, through the drain delay, /readyz answers 503 "draining" while
// /healthz still answers 200 and requests are still served; then the
// server stops.
func TestReadinessDuringShutdown(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"api/ping.go": "//go:build ignore\n\npackage main\n\nvar ping = func() string { return \"pong\" }\n",
		"task/pid.go": taskPid,
	})
	logs := &testutil.Buffer{}
	app := host.New(host.WithRoot(root), host.WithLogOutput(logs, slog.LevelInfo), host.WithTaskWorkers(1),
		host.WithConfig(func(c *host.Config) {
			c.WorkerCommand = testWorkerCommand
			c.Ops.DrainDelay = 1500 * time.Millisecond
		}))
	app.Symbols(symbols.Symbols)
	s := serveLoopback(t, app)
	base := "http://" + s.addr
	testutil.WaitFor(t, 15*time.Second, "the server", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	code, rb := readyz(t, base)
	want := map[string]string{"started": "ok", "database": "ok", "tasks": "ok"}
	if code != 200 || rb.Status != "ready" || !sameChecks(rb.Checks, want) {
		t.Fatalf("/readyz before shutdown: %d %+v, want 200 ready %v", code, rb, want)
	}

	s.shutdown()
	var drained readyBody
	testutil.WaitFor(t, 5*time.Second, "/readyz to fail", func() bool {
		code, drained = readyz(t, base)
		return code == http.StatusServiceUnavailable
	})
	if drained.Status != "not ready" || drained.Checks["started"] != "draining" {
		t.Errorf("/readyz while draining: %+v", drained)
	}
	if code, body := fetchOps(t, "GET", base+"/healthz"); code != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Errorf("/healthz while draining: %d %q, want 200", code, body)
	}
	if code, body := fetchOps(t, "GET", base+"/api/ping"); code != 200 || body != "pong" {
		t.Errorf("/api/ping while draining: %d %q, want 200 pong", code, body)
	}
	if err := s.wait(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the server still answers after shutdown")
	}
	if !strings.Contains(logs.String(), "zealgo draining") {
		t.Errorf("log does not tell of the drain:\n%s", logs)
	}
}

func sameChecks(got, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// TestHealthBeforeRouting: the checks are answered before the global
// middleware (here one that refuses everything), at the configured paths;
// the database going away makes the application not ready, and the log
// says why once; other methods get 405; empty paths turn them off.
func TestHealthBeforeRouting(t *testing.T) {
	deny := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "denied", http.StatusForbidden) })
	}
	ta := newTestAppWith(t, map[string]string{"public/index.html": "home"}, func(a *host.App) { a.Use(deny) },
		host.WithConfig(func(c *host.Config) { c.Ops.HealthPath, c.Ops.ReadyPath = "/live", "/ready" }))
	base := ta.srv.URL
	if code, body := fetchOps(t, "GET", base+"/live"); code != 200 || body != "{\"status\":\"ok\"}\n" {
		t.Errorf("GET /live: %d %q", code, body)
	}
	if code, body := fetchOps(t, "HEAD", base+"/ready"); code != 200 || body != "" {
		t.Errorf("HEAD /ready: %d %q", code, body)
	}
	if code, _ := fetchOps(t, "POST", base+"/live"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /live: %d, want 405", code)
	}
	if code, _ := fetchOps(t, "GET", base+"/healthz"); code != http.StatusForbidden {
		t.Errorf("GET /healthz with the path moved: %d, want the middleware's 403", code)
	}
	if err := ta.app.DB().Close(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		code, body := fetchOps(t, "GET", base+"/ready")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, `"database":"down"`) {
			t.Fatalf("GET /ready with the database closed: %d %q", code, body)
		}
	}
	if n := strings.Count(ta.logs.String(), "readiness check failing"); n != 1 {
		t.Errorf("the failing check is logged %d times, want once:\n%s", n, ta.logs)
	}

	off := newTestApp(t, map[string]string{"public/healthz": "mine"},
		host.WithConfig(func(c *host.Config) { c.Ops.HealthPath, c.Ops.ReadyPath = "", "" }))
	if code, body := fetchOps(t, "GET", off.srv.URL+"/healthz"); code != 200 || body != "mine" {
		t.Errorf("with the checks off: %d %q", code, body)
	}
	if code, _ := fetchOps(t, "GET", off.srv.URL+"/readyz"); code != 404 {
		t.Errorf("/readyz with the checks off: %d, want 404", code)
	}
}

// TestAccessLogJSON: with the access log on and a JSON log, every line
// is one JSON object, and each request has one record with its method,
// path, status, bytes, duration, request id and file.
func TestAccessLogJSON(t *testing.T) {
	logs := &testutil.Buffer{}
	ta := newTestApp(t, map[string]string{
		"api/users.go":      "//go:build ignore\n\npackage main\n\nvar users = func() any { return map[string]any{\"n\": 2} }\n",
		"public/a.txt":      "static",
		"api/fail/bad.go":   "//go:build ignore\n\npackage main\n\nimport \"errors\"\n\nvar bad = func() (any, error) { return nil, errors.New(\"no\") }\n",
		"public/index.html": "home",
	}, host.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))), host.WithAccessLog(true))
	type sent struct {
		method, path, query string
		status              int
		file                string
	}
	reqs := []sent{
		{"GET", "/api/users", "?secret=1", 200, "api/users.go"},
		{"POST", "/api/users", "", 200, "api/users.go"},
		{"GET", "/api/fail/bad", "", 500, "api/fail/bad.go"},
		{"GET", "/a.txt", "", 200, ""},
		{"GET", "/nothing", "", 404, ""},
	}
	ids := map[string]sent{}
	sizes := map[string]int{}
	for _, r := range reqs {
		req, _ := http.NewRequest(r.method, ta.srv.URL+r.path+r.query, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != r.status {
			t.Fatalf("%s %s: %d, want %d", r.method, r.path, resp.StatusCode, r.status)
		}
		id := resp.Header.Get("X-Request-Id")
		ids[id], sizes[id] = r, len(b)
	}
	records := matchAccessRecords(t, strings.TrimSpace(logs.String()), ids, func(line, id string, rec map[string]any, want sent) {
		if rec["method"] != want.method || rec["path"] != want.path || rec["status"] != float64(want.status) ||
			rec["bytes"] != float64(sizes[id]) || rec["level"] != "INFO" {
			t.Errorf("access record %s, want %+v with %d bytes", line, want, sizes[id])
		}
		if file, _ := rec["file"].(string); file != want.file {
			t.Errorf("access record %s: file %q, want %q", line, file, want.file)
		}
		if d, ok := rec["duration"].(float64); !ok || d <= 0 {
			t.Errorf("access record %s: duration %v", line, rec["duration"])
		}
		if _, ok := rec["remote"].(string); !ok {
			t.Errorf("access record %s: no remote", line)
		}
	})
	if records != len(reqs) || len(ids) != 0 {
		t.Errorf("%d access records for %d requests; requests without one: %v\n%s", records, len(reqs), ids, logs)
	}
}

// TestServeFlagsFromEnvironment: every serve flag can come from its
// ZEALGO_ variable; a flag on the command line wins; a bad value names
// the variable; -h lists the variables.
func TestServeFlagsFromEnvironment(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"public/index.html": "home"})
	addr, metrics := testutil.FreeAddr(t), testutil.FreeAddr(t)
	t.Setenv("ZEALGO_ROOT", root)
	t.Setenv("ZEALGO_ADDR", "127.0.0.1:1") // the flag below wins
	t.Setenv("ZEALGO_METRICS_ADDR", metrics)
	t.Setenv("ZEALGO_READY_PATH", "/ready-from-env")
	t.Setenv("ZEALGO_DATA", t.TempDir())
	t.Setenv(host.SessionRedisEnv, "")
	t.Setenv(host.DBEnv, "")
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &testutil.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- host.New().Run(ctx, []string{"serve", "--addr", addr}, io.Discard, stderr)
	}()
	testutil.WaitFor(t, 15*time.Second, "the server on the --addr address", func() bool {
		resp, err := http.Get("http://" + addr + "/ready-from-env")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	if code, body := fetchOps(t, "GET", "http://"+metrics+"/metrics"); code != 200 || !strings.Contains(body, "zealgo_http_requests_in_flight") {
		t.Errorf("metrics at $ZEALGO_METRICS_ADDR: %d\n%.300s", code, body)
	}
	if code, body := fetchOps(t, "GET", "http://"+addr+"/"); code != 200 || body != "home" {
		t.Errorf("GET / of $ZEALGO_ROOT: %d %q", code, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, stderr)
	}

	t.Setenv("ZEALGO_TASK_WORKERS", "many")
	stderr = &testutil.Buffer{}
	if code := host.New().Run(context.Background(), []string{"serve"}, io.Discard, stderr); code != 2 ||
		!strings.Contains(stderr.String(), "ZEALGO_TASK_WORKERS=many") {
		t.Errorf("a bad variable: exit %d, %s", code, stderr)
	}
	t.Setenv("ZEALGO_TASK_WORKERS", "")

	stdout := &testutil.Buffer{}
	host.New().Run(context.Background(), []string{"serve", "-h"}, stdout, io.Discard)
	help := stdout.String()
	for _, env := range []string{"ZEALGO_ADDR", "ZEALGO_ROOT", "ZEALGO_DATA", "ZEALGO_TASK_WORKERS", "ZEALGO_DEV",
		"ZEALGO_METRICS_ADDR", "ZEALGO_PPROF", "ZEALGO_ACCESS_LOG", "ZEALGO_LOG_FORMAT", "ZEALGO_LOG_LEVEL",
		"ZEALGO_HEALTH_PATH", "ZEALGO_READY_PATH", "ZEALGO_DRAIN_DELAY", host.DBEnv, host.SessionRedisEnv} {
		if !strings.Contains(help, "$"+env) {
			t.Errorf("serve -h does not name $%s:\n%s", env, help)
		}
	}
}

// TestLogFlags: --log-format and --log-level shape the serve command's
// log; a bad value stops it before it starts.
func TestLogFlags(t *testing.T) {
	t.Setenv(host.SessionRedisEnv, "")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "public"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--log-format", "yaml"}, `log format "yaml": want text or json`},
		{[]string{"--log-level", "loud"}, "log level loud: want debug, info, warn or error"},
		{[]string{"--pprof"}, "set the metrics address (--metrics-addr) too"},
	} {
		stderr := &testutil.Buffer{}
		args := append([]string{"serve", "--root", root, "--addr", testutil.FreeAddr(t), "--data", t.TempDir()}, tc.args...)
		if code := host.New().Run(context.Background(), args, io.Discard, stderr); code == 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, %s; want %q", tc.args, code, stderr, tc.want)
		}
	}
}
