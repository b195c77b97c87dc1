package host_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// natsTaskFiles: a task that reports what TaskInfo tells it and logs
// through TaskInfo.Log, and an endpoint that dispatches it with API.Task.
var natsTaskFiles = map[string]string{
	"task/info.go": taskFile("info", `"github.com/zealgo/zealgo/host"`, `func(ti *host.TaskInfo, n int) any {
	ti.Log.Info("task says hello", "n", n)
	return map[string]any{"request_id": ti.RequestID, "delivery": ti.Delivery, "id": ti.ID, "handler": ti.Handler, "n": n}
}`),
	"task/pid.go": taskPid,
	"api/go.go": natsHead + `var get = func(api *host.API) any {
	id, err := api.Task(host.Task{Handler: "/task/info", Args: []any{7}})
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return map[string]any{"id": id}
}
`,
}

// natsOpts configures a test application on NATS with a short ack wait.
func natsOpts(url string) host.Option {
	return host.WithConfig(func(c *host.Config) {
		c.NATS.URL = url
		c.NATS.AckWait = time.Second
		c.NATS.MaxDeliver = 3
	})
}

// TestTaskNATS: with the embedded NATS server, tasks run in the worker
// processes, which pull them from JetStream; a task dispatched by
// API.Task sees the request's id in TaskInfo, and its log records,
// forwarded from the worker, carry it; Server.Task dispatches with none;
// ids are unique; arguments over the server's bound are refused.
func TestTaskNATS(t *testing.T) {
	t.Parallel()
	ta := newTaskApp(t, natsTaskFiles, 2, true, natsOpts(host.NATSEmbedded))
	if !strings.Contains(ta.logs.String(), "NATS JetStream") || !strings.Contains(ta.logs.String(), "embedded at nats://127.0.0.1:") {
		t.Fatalf("the log does not name the embedded server:\n%s", ta.logs)
	}
	if _, err := os.Stat(filepath.Join(ta.root, "data", "nats", "jetstream")); err != nil {
		t.Errorf("no JetStream store under the data directory: %v", err)
	}
	resp, body := do(t, nil, "GET", ta.srv.URL+"/api/go", nil, "X-Request-Id", "req-nats-1")
	var got struct{ ID int64 }
	if resp.StatusCode != 200 || fromJSON(t, body, &got) != nil || got.ID == 0 {
		t.Fatalf("GET /api/go: %d %s", resp.StatusCode, body)
	}
	f := ta.sink.wait(t, got.ID)
	want := fmt.Sprintf(`{"delivery":1,"handler":"/task/info","id":%d,"n":7,"request_id":"req-nats-1"}`, got.ID)
	if f.err != nil || toJSON(t, f.result) != want {
		t.Fatalf("finish: %v %v, want %s", toJSON(t, f.result), f.err, want)
	}
	defer func() {
		if t.Failed() {
			t.Log(ta.logs)
		}
	}()
	testutil.WaitFor(t, 5*time.Second, "the task's log record with the request id", func() bool {
		for l := range strings.Lines(ta.logs.String()) {
			if strings.Contains(l, `msg="task says hello"`) && strings.Contains(l, "request_id=req-nats-1") &&
				strings.Contains(l, fmt.Sprintf("task_id=%d", got.ID)) {
				return true
			}
		}
		return false
	})
	plain := ta.run(t, "/task/info", 8)
	if m := plain.result.(map[string]any); m["request_id"] != "" || plain.id == got.ID {
		t.Errorf("Server.Task: %v (id %d after %d)", m, plain.id, got.ID)
	}
	pids := map[int]bool{}
	for range 20 {
		pids[ta.pidOf(t)] = true
	}
	for pid := range pids {
		if !strings.Contains(fmt.Sprint(ta.app.Server().TaskWorkerPIDs()), fmt.Sprint(pid)) {
			t.Errorf("a task ran in process %d, not one of the workers %v", pid, ta.app.Server().TaskWorkerPIDs())
		}
	}
	_, err := ta.app.Server().Task(host.Task{Handler: "/task/info", Args: []any{strings.Repeat("x", 9<<20)}})
	if err == nil || !strings.Contains(err.Error(), "bound on this NATS server") {
		t.Errorf("9 MiB of arguments: %v", err)
	}
}

// TestTaskNATSWorkersDown: tasks dispatched while no task worker runs
// (each dies at start) wait in JetStream and run once the workers start
// again.
func TestTaskNATSWorkersDown(t *testing.T) {
	block := filepath.Join(t.TempDir(), "block")
	t.Setenv(workerBlockEnv, block)
	ta := newTaskApp(t, natsTaskFiles, 1, true, natsOpts(host.NATSEmbedded))
	pid := ta.app.Server().TaskWorkerPIDs()[0]
	if err := os.WriteFile(block, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the worker to fail its restarts", func() bool {
		return strings.Count(ta.logs.String(), "task worker could not restart") >= 2
	})
	var ids []int64
	for i := range 5 {
		id, err := ta.app.Server().Task(host.Task{Handler: "/task/info", Args: []any{i}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	failed := strings.Count(ta.logs.String(), "task worker could not restart")
	testutil.WaitFor(t, 10*time.Second, "a restart to fail after the dispatches", func() bool {
		return strings.Count(ta.logs.String(), "task worker could not restart") > failed
	})
	if n := ta.sink.count(); n != 0 {
		t.Fatalf("%d tasks finished while no worker ran", n)
	}
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if f := ta.sink.wait(t, id); f.err != nil {
			t.Errorf("task %d: %v", id, f.err)
		}
	}
}

// TestTaskNATSNoWorkers: without task workers, dispatch still answers
// ErrNoTaskWorkers and the embedded server does not start.
func TestTaskNATSNoWorkers(t *testing.T) {
	ta := newTestApp(t, natsTaskFiles, natsOpts(host.NATSEmbedded))
	if _, err := ta.app.Server().Task(host.Task{Handler: "/task/info", Args: []any{1}}); err != host.ErrNoTaskWorkers {
		t.Fatalf("Task: %v", err)
	}
	if strings.Contains(ta.logs.String(), "NATS JetStream") {
		t.Errorf("the embedded server started with nothing to use it:\n%s", ta.logs)
	}
}

// natsSessionFiles: log in (a session value), read it back, and a
// rate-limited endpoint.
var natsSessionFiles = map[string]string{
	"api/login.go": natsHead + `var post = func(api *host.API) any {
	api.G().Session.Set("user", api.String("user"))
	api.G().Session.Rotate()
	return map[string]any{"ok": true}
}
`,
	"api/me.go": natsHead + `var get = func(api *host.API) any {
	return map[string]any{"user": api.G().Session.String("user")}
}
`,
	"api/limited.go": natsHead + `var middleware = []string{"rate-limit:5"}

var get = func(api *host.API) any { return map[string]any{"ok": true} }
`,
}

// TestSessionsNATSShared: two instances on one NATS server (a nats://
// URL) keep their sessions in its key-value store without being told to:
// a login on one is a login on the other; and the rate-limit alias counts
// the requests of both.
func TestSessionsNATSShared(t *testing.T) {
	url := sharedNATS(t)
	secret := host.WithSessionSecret(strings.Repeat("s", 40))
	a := newTestApp(t, natsSessionFiles, natsOpts(url), secret)
	b := newTestApp(t, natsSessionFiles, natsOpts(url), secret)
	if !strings.Contains(a.logs.String(), "sessions kept in NATS key-value") || strings.Contains(a.logs.String(), "tok@") {
		t.Fatalf("the log does not say where sessions are, or shows the token:\n%s", a.logs)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if resp, body := do(t, c, "POST", a.srv.URL+"/api/login", strings.NewReader("user=ada"),
		"Content-Type", "application/x-www-form-urlencoded"); resp.StatusCode != 200 {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	// The jar sends the cookie to b too: cookies do not depend on ports.
	if resp, body := do(t, c, "GET", b.srv.URL+"/api/me", nil); body != `{"user":"ada"}` {
		t.Fatalf("the other instance: %d %s", resp.StatusCode, body)
	}
	// Six requests within one second, five to a and one to b: b refuses
	// the sixth, which a limit of each process alone would let through.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	for i := range 5 {
		if resp, body := do(t, nil, "GET", a.srv.URL+"/api/limited", nil); resp.StatusCode != 200 {
			t.Fatalf("request %d to a: %d %s", i+1, resp.StatusCode, body)
		}
	}
	if resp, body := do(t, nil, "GET", b.srv.URL+"/api/limited", nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("sixth request, to b: %d %s", resp.StatusCode, body)
	}
}

// TestSessionsNATSEmbedded: Session.Store "nats" starts the embedded
// server even without task workers, and a session outlives a restart of
// the application on the same data directory.
func TestSessionsNATSEmbedded(t *testing.T) {
	opts := []host.Option{natsOpts(host.NATSEmbedded), host.WithConfig(func(c *host.Config) { c.Session.Store = "nats" })}
	a := newTestApp(t, natsSessionFiles, opts...)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	do(t, c, "POST", a.srv.URL+"/api/login", strings.NewReader("user=grace"), "Content-Type", "application/x-www-form-urlencoded")
	a.srv.Close()
	if err := a.app.Close(); err != nil {
		t.Fatal(err)
	}
	b := host.New(append(opts, host.WithRoot(a.root))...)
	b.Symbols(symbols.Symbols)
	h, err := b.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); b.Close() }()
	if resp, body := do(t, c, "GET", srv.URL+"/api/me", nil); body != `{"user":"grace"}` {
		t.Fatalf("after the restart: %d %s", resp.StatusCode, body)
	}
}

// natsHead starts a handler file that imports host.
const natsHead = "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n"

func fromJSON(t *testing.T, s string, v any) error {
	t.Helper()
	return json.Unmarshal([]byte(s), v)
}

// natsThrottleFiles: a log-in that always fails, throttled by App.Throttle.
var natsThrottleFiles = map[string]string{
	"api/guess.go": natsHead + `var post = func(api *host.API) any {
	if _, e := api.App().Throttle("guess").Begin("user:ada"); e != nil {
		return e
	}
	return host.NewError(401, "invalid_credentials", "wrong")
}
`,
}

// TestThrottleNATSShared: with a shared NATS, App.Throttle counts the
// failures of every instance: five at one, and the sixth attempt, at the
// other, is refused with 429 and Retry-After.
func TestThrottleNATSShared(t *testing.T) {
	url := sharedNATS(t)
	a := newTestApp(t, natsThrottleFiles, natsOpts(url))
	b := newTestApp(t, natsThrottleFiles, natsOpts(url))
	for i := range 5 {
		if resp, body := do(t, nil, "POST", a.srv.URL+"/api/guess", nil); resp.StatusCode != 401 {
			t.Fatalf("attempt %d at a: %d %s", i+1, resp.StatusCode, body)
		}
	}
	resp, body := do(t, nil, "POST", b.srv.URL+"/api/guess", nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("sixth attempt, at b: %d %s (Retry-After %q)", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
}

// TestThrottleNATSEmbeddedRestart: with the embedded NATS on, the
// throttle's counts live in its store, in the data directory, and outlive
// the process: five failures, a restart of the application, and the sixth
// attempt is refused (in the process's memory it would be let through).
func TestThrottleNATSEmbeddedRestart(t *testing.T) {
	opts := []host.Option{natsOpts(host.NATSEmbedded), host.WithConfig(func(c *host.Config) { c.Session.Store = "nats" })}
	a := newTestApp(t, natsThrottleFiles, opts...)
	for i := range 5 {
		if resp, body := do(t, nil, "POST", a.srv.URL+"/api/guess", nil); resp.StatusCode != 401 {
			t.Fatalf("attempt %d: %d %s", i+1, resp.StatusCode, body)
		}
	}
	a.srv.Close()
	if err := a.app.Close(); err != nil {
		t.Fatal(err)
	}
	b := host.New(append(opts, host.WithRoot(a.root))...)
	b.Symbols(symbols.Symbols)
	h, err := b.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); b.Close() }()
	resp, body := do(t, nil, "POST", srv.URL+"/api/guess", nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("sixth attempt, after the restart: %d %s (Retry-After %q)", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
}
