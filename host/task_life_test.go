package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// TestTaskShutdown stops a serving application while tasks run: it waits
// for them within Config.ShutdownTimeout, reports those cut short, and
// leaves no worker process behind.
func TestTaskShutdown(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		release bool // let the task finish during the shutdown
		kind    error
	}{
		{"running tasks finish", 20 * time.Second, true, nil},
		{"deadline cuts them short", 300 * time.Millisecond, false, host.ErrTaskShutdown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testutil.WriteTree(t, map[string]string{"task/block.go": taskBlock})
			sink := newTaskSink()
			app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, 0), host.WithTaskWorkers(2),
				host.WithConfig(func(c *host.Config) { c.WorkerCommand = testWorkerCommand; c.ShutdownTimeout = tt.timeout }))
			app.Symbols(symbols.Symbols)
			app.OnTaskFinish(sink.finish)
			srv := serveLoopback(t, app)
			var pids []int
			testutil.WaitFor(t, 15*time.Second, "the workers", func() bool { pids = app.Server().TaskWorkerPIDs(); return len(pids) == 2 })
			dir, release := blockDir(t)
			var ids []int64
			for i := 0; i < 3; i++ {
				id, err := app.Server().Task(host.Task{Handler: "/task/block", Args: []any{dir, i}})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			waitStarted(t, dir, 3)
			srv.shutdown()
			if tt.release {
				// The shutdown has begun when new tasks are refused.
				testutil.WaitFor(t, 10*time.Second, "dispatch to be refused", func() bool {
					_, err := app.Server().Task(host.Task{Handler: "/task/block", Args: []any{dir, 9}})
					return errors.Is(err, host.ErrTasksStopped)
				})
				if n := sink.count(); n != 0 {
					t.Fatalf("%d tasks reported before they were released", n)
				}
				release()
			}
			if err := srv.wait(t); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				f, ok := sink.lookup(id)
				switch {
				case !ok:
					t.Errorf("task %d has no finish after Serve returned", id)
				case tt.kind == nil && (f.err != nil || f.result != "released"):
					t.Errorf("task %d: %v %v; want it released", id, f.result, f.err)
				case tt.kind != nil && !errors.Is(f.err, tt.kind):
					t.Errorf("task %d: %v %v; want %v", id, f.result, f.err, tt.kind)
				}
			}
			for _, pid := range pids {
				if !processGone(pid) {
					t.Errorf("worker %d still exists after Serve returned", pid)
				}
			}
			if _, err := app.Server().Task(host.Task{Handler: "/task/block"}); !errors.Is(err, host.ErrTasksStopped) {
				t.Errorf("Task after shutdown: %v", err)
			}
		})
	}
}

// TestTaskWorkerStartFails: a worker command that does not speak the
// protocol keeps the application from starting, with the reason.
func TestTaskWorkerStartFails(t *testing.T) {
	tests := []struct {
		name string
		cmd  func() *exec.Cmd
		msg  string
	}{
		{"exits", func() *exec.Cmd { return exec.Command("false") }, "exit status 1"},
		{"speaks garbage", func() *exec.Cmd { return exec.Command("sh", "-c", "echo 'hello there'; cat >/dev/null") }, "taskproto"},
		{"missing", func() *exec.Cmd { return exec.Command("/nonexistent/zealgo-worker") }, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, 0), host.WithTaskWorkers(1),
				host.WithConfig(func(c *host.Config) { c.WorkerCommand = tt.cmd }))
			_, err := app.Handler()
			defer app.Close()
			if err == nil || !strings.Contains(err.Error(), "task worker 0") || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Handler: %v; want a task worker start error with %q", err, tt.msg)
			}
		})
	}
}

// TestTaskSample dispatches the repository's task/report.go from its
// handler api/tasks/report.go.
func TestTaskSample(t *testing.T) {
	ta := newTaskApp(t, nil, 1, true, host.WithRoot(".."), host.WithDataDir(t.TempDir()))
	post := func(body string) (int, map[string]any) {
		resp, err := http.Post(ta.srv.URL+"/api/tasks/report", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, m
	}
	code, m := post(`{"title":"q3","values":[3,1,2]}`)
	id, _ := m["task_id"].(float64)
	if code != 202 || id == 0 {
		t.Fatalf("POST: %d %v", code, m)
	}
	f := ta.sink.wait(t, int64(id))
	r, _ := f.result.(map[string]any)
	if f.err != nil || r["title"] != "q3" || r["count"] != int64(3) || r["sum"] != int64(6) || r["mean"] != int64(2) || r["min"] != int64(1) || r["max"] != int64(3) {
		t.Fatalf("report: %v %v", f.result, f.err)
	}
	// A value that is no number is a task error, not a crash.
	code, m = post(`{"title":"bad","values":[1,"two"]}`)
	if f := ta.sink.wait(t, int64(m["task_id"].(float64))); code != 202 || !errors.Is(f.err, host.ErrTaskArgs) {
		t.Fatalf("bad values: %d %v %v", code, f.result, f.err)
	}
	if code, m = post(`{"title":""}`); code != 400 || m["error"] != "invalid_request" {
		t.Fatalf("empty: %d %v", code, m)
	}
}

// TestTaskCheck: zealgo check reports task files that hold no usable task
// func, with their position.
func TestTaskCheck(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"task/ok.go":     taskFile("ok", "", "func() {}"),
		"task/notf.go":   "//go:build ignore\n\npackage main\n\nvar notf = 3\n",
		"task/none.go":   "//go:build ignore\n\npackage main\n\nvar other = 3\n",
		"task/three.go":  taskFile("three", "", "func() (int, int, int) { return 1, 2, 3 }"),
		"task/second.go": taskFile("second", "", "func() (int, string) { return 1, \"\" }"),
	})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, 0))
	app.Symbols(symbols.Symbols)
	problems, n, err := app.Check()
	if err != nil || n != 5 {
		t.Fatalf("Check: %d files, %v", n, err)
	}
	got := strings.Join(problems, "\n")
	for _, want := range []string{
		"task/notf.go:5:5: notf must be a func, not int",
		"task/none.go: a task file must declare var none = func(args...) any",
		"task/three.go:6:5: three returns 3 results",
		"task/second.go:6:5: second: the second result must be error, not string",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems, want 4:\n%s", len(problems), got)
	}
}

// TestTaskShutdownCancels: at the shutdown deadline the running tasks'
// contexts are cancelled and they get a short grace to return: a task
// that watches its context reaches the finish callback with what it
// returns, or its error; one that ignores it is cut short.
func TestTaskShutdownCancels(t *testing.T) {
	for _, coroutine := range []bool{true, false} {
		t.Run(fmt.Sprintf("coroutine=%v", coroutine), func(t *testing.T) {
			root := testutil.WriteTree(t, map[string]string{
				"task/block.go": taskBlock,
				"task/watch.go": taskFile("watch", `"context"
	"fmt"
	"os"
	"path/filepath"`, `func(ctx context.Context, dir string, id int, fail bool) (string, error) {
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("started-%d", id)), nil, 0o644)
	<-ctx.Done()
	if fail {
		return "", fmt.Errorf("stopped early: %w", ctx.Err())
	}
	return "cancelled", nil
}`),
			})
			sink := newTaskSink()
			workers := 1
			if !coroutine {
				workers = 3 // one task each
			}
			app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, 0), host.WithTaskWorkers(workers), host.WithTaskCoroutine(coroutine),
				host.WithConfig(func(c *host.Config) { c.WorkerCommand = testWorkerCommand; c.ShutdownTimeout = 300 * time.Millisecond }))
			app.Symbols(symbols.Symbols)
			app.OnTaskFinish(sink.finish)
			srv := serveLoopback(t, app)
			var pids []int
			testutil.WaitFor(t, 15*time.Second, "the workers", func() bool { pids = app.Server().TaskWorkerPIDs(); return len(pids) == workers })
			dir, _ := blockDir(t)
			dispatch := func(handler string, args ...any) int64 {
				id, err := app.Server().Task(host.Task{Handler: handler, Args: args})
				if err != nil {
					t.Fatal(err)
				}
				return id
			}
			watch := dispatch("/task/watch", dir, 0, false)
			failing := dispatch("/task/watch", dir, 1, true)
			stuck := dispatch("/task/block", dir, 2)
			waitStarted(t, dir, 3)
			start := time.Now()
			srv.shutdown()
			if err := srv.wait(t); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if f, ok := sink.lookup(watch); !ok || f.err != nil || f.result != "cancelled" {
				t.Errorf("the task watching its context: %v %v (reported: %v); want the result \"cancelled\"", f.result, f.err, ok)
			}
			if f, ok := sink.lookup(failing); !ok || !errors.Is(f.err, host.ErrTaskFailed) || !strings.Contains(f.err.Error(), "stopped early: context canceled") {
				t.Errorf("the task returning its context's error: %v %v (reported: %v)", f.result, f.err, ok)
			}
			if f, ok := sink.lookup(stuck); !ok || !errors.Is(f.err, host.ErrTaskShutdown) {
				t.Errorf("the task ignoring its context: %v %v (reported: %v); want ErrTaskShutdown", f.result, f.err, ok)
			}
			if took > 10*time.Second {
				t.Errorf("the shutdown took %v with a deadline of 300ms", took)
			}
			for _, pid := range pids {
				if !processGone(pid) {
					t.Errorf("worker %d still exists after Serve returned", pid)
				}
			}
		})
	}
}

// hookWorkerEnv, set to 1, makes this test binary a task worker of an
// application with OnStart and OnStop hooks (hookedApp).
const hookWorkerEnv = "ZEALGO_TEST_TASK_HOOK_WORKER"

func init() {
	if os.Getenv(hookWorkerEnv) == "1" {
		app := host.New()
		hookedApp(app)
		os.Exit(app.Run(context.Background(), []string{"worker"}, os.Stdout, os.Stderr))
	}
}

// hookedApp configures app like an application with a store that opens
// at start-up: a provided *sync.Map that its OnStart hook fills, and an
// OnStop hook that leaves a file in the data directory.
func hookedApp(app *host.App) {
	app.Symbols(symbols.Symbols)
	store := &sync.Map{}
	app.Provide(store)
	app.OnStart(func(a *host.App) error {
		store.Store("open", a.Config().DataDir)
		store.Store("worker", a.IsTaskWorker())
		return nil
	})
	app.OnStop(func() {
		v, _ := store.Load("open")
		dir, _ := v.(string)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("stopped-%d", os.Getpid())), nil, 0o644)
	})
}

// TestTaskWorkerHooks: a worker process runs the application's OnStart
// hooks before it serves tasks, so that a provided value opened there is
// ready inside a task, and its OnStop hooks when it exits.
func TestTaskWorkerHooks(t *testing.T) {
	data := t.TempDir()
	root := testutil.WriteTree(t, map[string]string{
		"task/open.go": taskFile("open", `"os"
	"sync"`, `func(store *sync.Map) any {
	dir, ok := store.Load("open")
	worker, _ := store.Load("worker")
	return map[string]any{"open": ok, "dir": dir, "pid": os.Getpid(), "worker": worker}
}`),
	})
	sink := newTaskSink()
	app := host.New(host.WithRoot(root), host.WithDataDir(data), host.WithLogOutput(io.Discard, 0), host.WithTaskWorkers(1),
		host.WithConfig(func(c *host.Config) {
			c.WorkerCommand = func() *exec.Cmd {
				cmd := testWorkerCommand()
				cmd.Env = append(cmd.Env, hookWorkerEnv+"=1")
				return cmd
			}
		}))
	hookedApp(app)
	app.OnTaskFinish(sink.finish)
	closeApp := sync.OnceValue(app.Close)
	defer closeApp()
	if _, err := app.Handler(); err != nil {
		t.Fatal(err)
	}
	pids := app.Server().TaskWorkerPIDs()
	id, err := app.Server().Task(host.Task{Handler: "/task/open"})
	if err != nil {
		t.Fatal(err)
	}
	f := sink.wait(t, id)
	m, _ := f.result.(map[string]any)
	if f.err != nil || m["open"] != true || m["dir"] != data || m["worker"] != true {
		t.Fatalf("the provided store inside a task: %v %v; want it opened by OnStart with the data directory %s", f.result, f.err, data)
	}
	if len(pids) != 1 || m["pid"] != int64(pids[0]) {
		t.Fatalf("the task ran in pid %v, the worker is %v", m["pid"], pids)
	}
	if app.IsTaskWorker() {
		t.Error("the server process says it is a task worker")
	}
	closeApp()
	if _, err := os.Stat(filepath.Join(data, fmt.Sprintf("stopped-%d", pids[0]))); err != nil {
		t.Errorf("the worker did not run its OnStop hooks: %v", err)
	}
}
