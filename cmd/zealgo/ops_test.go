package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// jsonRecords parses every line of a log as one JSON object, failing the
// test on a line that is not one.
func jsonRecords(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is no JSON object: %q", line)
		}
		out = append(out, rec)
	}
	return out
}

// findRecord returns the first record whose fields hold the given values.
func findRecord(recs []map[string]any, want map[string]any) map[string]any {
	for _, r := range recs {
		ok := true
		for k, v := range want {
			ok = ok && r[k] == v
		}
		if ok {
			return r
		}
	}
	return nil
}

// TestServeOpsFromEnvironment runs the real binary configured by
// ZEALGO_ variables only: a JSON log with the access log on, metrics on
// their own address, a task worker. slog in a handler file and in a task
// file writes through the same JSON handler as the server's own records;
// the health checks answer; the metrics count the request; SIGTERM ends
// it cleanly with every line of its log a JSON object.
func TestServeOpsFromEnvironment(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"api/hello.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"log/slog\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
			"var hello = func(api *host.API) (any, error) {\n\tslog.Info(\"hello from a handler\", \"who\", api.Input[\"who\"])\n" +
			"\t_, err := api.App().Server().TaskContext(api.Context(), host.Task{Handler: \"/task/note\"})\n" +
			"\treturn map[string]any{\"ok\": true}, err\n}\n",
		"task/note.go": "//go:build ignore\n\npackage main\n\nimport \"log/slog\"\n\nvar note = func() any { slog.Info(\"hello from a task\"); return 1 }\n",
	})
	metrics := testutil.FreeAddr(t)
	for k, v := range map[string]string{"ZEALGO_LOG_FORMAT": "json", "ZEALGO_ACCESS_LOG": "true",
		"ZEALGO_METRICS_ADDR": metrics, "ZEALGO_TASK_WORKERS": "1", "ZEALGO_DATA": t.TempDir()} {
		t.Setenv(k, v)
	}
	cmd, base, logs := serve(t, root)
	for _, p := range []string{"/healthz", "/readyz"} {
		testutil.WaitFor(t, 10*time.Second, p, func() bool {
			resp, err := http.Get(base + p)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	}
	code, _, body := fetch(t, "GET", base+"/api/hello?who=ada", "", "")
	if code != 200 || body != `{"ok":true}` {
		t.Fatalf("GET /api/hello: %d %s", code, body)
	}
	testutil.WaitFor(t, 10*time.Second, "the task's record", func() bool {
		return strings.Contains(logs.String(), "hello from a task")
	})
	code, _, scraped := fetch(t, "GET", "http://"+metrics+"/metrics", "", "")
	if want := `zealgo_http_requests_total{code="200",handler="api/hello.go",method="GET"} 1`; code != 200 || !strings.Contains(scraped, want) {
		t.Errorf("metrics lack %s:\n%s", want, scraped)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, logs)
	}

	recs := jsonRecords(t, logs.String())
	if findRecord(recs, map[string]any{"msg": "hello from a handler", "who": "ada", "level": "INFO"}) == nil {
		t.Errorf("no JSON record of the handler's slog.Info:\n%s", logs)
	}
	if findRecord(recs, map[string]any{"msg": "hello from a task", "worker": float64(0)}) == nil {
		t.Errorf("no JSON record of the task's slog.Info:\n%s", logs)
	}
	access := findRecord(recs, map[string]any{"msg": "request", "path": "/api/hello", "status": float64(200), "file": "api/hello.go"})
	if access == nil || access["request_id"] == "" || access["duration"] == nil || access["bytes"] != float64(len(body)) {
		t.Errorf("access record %v:\n%s", access, logs)
	}
	if findRecord(recs, map[string]any{"msg": "zealgo stopped"}) == nil {
		t.Errorf("no stop record:\n%s", logs)
	}
}

// TestServeFlagWinsOverEnvironment: --log-format text on the command
// line wins over ZEALGO_LOG_FORMAT=json; serve -h names the variables.
func TestServeFlagWinsOverEnvironment(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"public/index.html": "home"})
	t.Setenv("ZEALGO_LOG_FORMAT", "json")
	t.Setenv("ZEALGO_DATA", t.TempDir())
	cmd, base, logs := serve(t, root, "--log-format", "text")
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if s := logs.String(); !strings.Contains(s, `level=INFO msg="zealgo serving"`) || strings.Contains(s, `{"time"`) {
		t.Errorf("want a text log:\n%s", s)
	}

	help, _, _ := run(t, "serve", "-h")
	for _, want := range []string{"[$ZEALGO_ADDR]", "[$ZEALGO_METRICS_ADDR]", "[$ZEALGO_LOG_FORMAT]", "[$ZEALGO_ACCESS_LOG]",
		"a flag on the command line wins over its variable"} {
		if !strings.Contains(help, want) {
			t.Errorf("serve -h lacks %q:\n%s", want, help)
		}
	}
}

// readyStatus returns the status of GET /readyz, or 0 when it fails.
func readyStatus(base string) int {
	resp, err := noKeepAlive.Get(base + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSupervisedDrain: SIGTERM to the supervisor reaches its child, which
// fails its readiness check for the drain delay while it goes on serving,
// then exits; so does the supervisor.
func TestSupervisedDrain(t *testing.T) {
	s, base, logs := supervised(t, testutil.WriteTree(t, crashFiles), "--drain-delay", "1500ms")
	child := servingPID(t, base, 0)
	if code := readyStatus(base); code != 200 {
		t.Fatalf("/readyz: %d", code)
	}
	if err := syscall.Kill(s.pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "the child to fail its readiness check", func() bool { return readyStatus(base) == 503 })
	if pid := pingPID(base); pid != child {
		t.Errorf("while draining /api/ping answers from %d, want the child %d", pid, child)
	}
	testutil.WaitFor(t, 10*time.Second, "the supervisor and its child to exit", func() bool { return !alive(child) && !alive(s.pid) })
	if !strings.Contains(logs.String(), "zealgo draining: not ready") {
		t.Errorf("log:\n%s", logs)
	}
}

// TestSupervisedHandOver: a child replaced for a late handler frees the
// metrics address for its successor and stops without waiting out the
// drain delay (its successor serves the socket already); the successor
// serves the metrics and is ready.
func TestSupervisedHandOver(t *testing.T) {
	metrics := testutil.FreeAddr(t)
	s, base, logs := supervised(t, testutil.WriteTree(t, crashFiles),
		"--max-execution-time", "1s", "--metrics-addr", metrics, "--drain-delay", "30s")
	first := servingPID(t, base, 0)
	if code, _, _ := fetch(t, "GET", "http://"+metrics+"/metrics", "", ""); code != 200 {
		t.Fatalf("metrics of the first child: %d", code)
	}
	if code, _, body := fetch(t, "GET", base+"/api/loop", "", ""); code != 503 {
		t.Fatalf("/api/loop: %d %s", code, body)
	}
	testutil.WaitFor(t, 10*time.Second, "the replaced child to exit", func() bool { return !alive(first) })
	second := servingPID(t, base, first)
	s.descendants(t) // killed at the end, rather than left to drain
	if code := readyStatus(base); code != 200 {
		t.Errorf("/readyz of the successor: %d", code)
	}
	code, _, scraped := fetch(t, "GET", "http://"+metrics+"/metrics", "", "")
	if code != 200 || !strings.Contains(scraped, "zealgo_http_requests_total") {
		t.Errorf("metrics of the successor %d: %d\n%s", second, code, scraped)
	}
	if strings.Contains(logs.String(), "metrics listener") && strings.Contains(logs.String(), "address already in use") {
		t.Errorf("the successor could not take the metrics address:\n%s", logs)
	}
}
