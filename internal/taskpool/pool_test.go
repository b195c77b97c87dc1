package taskpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/taskproto"
	"github.com/zealgo/zealgo/internal/testutil"
)

// outcomes records what an engine's finish callback receives.
type outcomes struct {
	mu    sync.Mutex
	got   map[int64]Outcome
	order []int64
}

func (o *outcomes) finish(x Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got[x.ID] = x
	o.order = append(o.order, x.ID)
}

func (o *outcomes) wait(t *testing.T, id int64) Outcome {
	t.Helper()
	var x Outcome
	testutil.WaitFor(t, 15*time.Second, fmt.Sprintf("the outcome of task %d", id), func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		var ok bool
		x, ok = o.got[id]
		return ok
	})
	return x
}

// testEngine is an engine over a pool of this test binary's workers.
type testEngine struct {
	*Engine
	pool *Pool
	out  *outcomes
	logs *testutil.Buffer
}

func startEngine(t *testing.T, workers int, coroutine bool) *testEngine {
	t.Helper()
	logs := &testutil.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	pool := New(Config{Workers: workers, Coroutine: coroutine, Command: testCommand, Log: log,
		Worker: taskproto.WorkerConfig{Root: "/srv/app"}})
	te := &testEngine{Engine: &Engine{}, pool: pool, out: &outcomes{got: map[int64]Outcome{}}, logs: logs}
	if err := te.Start(pool, te.out.finish, log); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		te.Stop(ctx)
	})
	return te
}

// run dispatches a task and waits for its outcome.
func (te *testEngine) run(t *testing.T, task string, meta map[string]string, args ...any) Outcome {
	t.Helper()
	id := te.dispatch(t, task, meta, args...)
	return te.out.wait(t, id)
}

func (te *testEngine) dispatch(t *testing.T, task string, meta map[string]string, args ...any) int64 {
	t.Helper()
	enc, err := taskproto.EncodeArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	id, err := te.Dispatch(context.Background(), "/task/"+task, enc, meta)
	if err != nil {
		t.Fatalf("dispatch %s: %v", task, err)
	}
	return id
}

func (te *testEngine) pidOf(t *testing.T) int {
	t.Helper()
	o := te.run(t, "pid", nil)
	var pid int
	if err := json.Unmarshal(o.Result, &pid); err != nil || o.Fail != "" {
		t.Fatalf("pid task: %+v", o)
	}
	return pid
}

// TestPoolRoundTrip: tasks run in real worker processes through the
// Runner the worker was handed; results, metadata and every class of
// failure come back to the finish callback; the workers got their
// configuration and their logs reach the pool's logger.
func TestPoolRoundTrip(t *testing.T) {
	t.Parallel()
	te := startEngine(t, 2, true)
	if pids := te.PIDs(); len(pids) != 2 || pids[0] == pids[1] {
		t.Fatalf("PIDs() = %v, want two distinct", pids)
	}
	if o := te.run(t, "echo", nil, 1, "two", map[string]any{"three": 3}); string(o.Result) != `[1,"two",{"three":3}]` || o.Fail != "" {
		t.Errorf("echo: %+v", o)
	}
	meta := map[string]string{"request_id": "r-42"}
	if o := te.run(t, "meta", meta); string(o.Result) != `{"request_id":"r-42"}` {
		t.Errorf("meta: %+v", o)
	}
	tests := []struct {
		task, fail, msg string
	}{
		{"panic", taskproto.FailPanic, "panic: boom"},
		{"fail", taskproto.FailArgs, "bad arguments"},
		{"nope", taskproto.FailLoad, "there is no task nope"},
	}
	for _, tt := range tests {
		o := te.run(t, tt.task, nil, "boom")
		if o.Fail != tt.fail || o.Err != tt.msg || o.Result != nil || o.Handler != "/task/"+tt.task {
			t.Errorf("%s: %+v, want fail %q err %q", tt.task, o, tt.fail, tt.msg)
		}
	}
	if o := te.run(t, "echo", nil); string(o.Result) != `[]` {
		t.Errorf("the worker that panicked does not serve: %+v", o)
	}
	logs := te.logs.String()
	for _, want := range []string{`msg="test worker configured" slot=0 root=/srv/app coroutine=true worker=0`, "slot=1", `level=ERROR msg="task panic"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
}

// TestPoolSerial: without Coroutine a worker runs one task at a time, so
// a quick task dispatched after a slow one finishes after it (with
// Coroutine it would finish first).
func TestPoolSerial(t *testing.T) {
	t.Parallel()
	te := startEngine(t, 1, false)
	a, b := te.dispatch(t, "sleep", nil, 200), te.dispatch(t, "sleep", nil, 0)
	te.out.wait(t, a)
	te.out.wait(t, b)
	te.out.mu.Lock()
	defer te.out.mu.Unlock()
	if !reflect.DeepEqual(te.out.order, []int64{a, b}) {
		t.Fatalf("finish order %v, want %v", te.out.order, []int64{a, b})
	}
}

// TestPoolWorkerDies: a worker that dies mid-task fails the task with
// FailExited naming its pid, and is replaced by a new process.
func TestPoolWorkerDies(t *testing.T) {
	t.Parallel()
	te := startEngine(t, 1, true)
	old := te.pidOf(t)
	o := te.run(t, "exit", nil)
	if o.Fail != taskproto.FailExited || !strings.Contains(o.Err, fmt.Sprintf("pid %d", old)) || !strings.Contains(o.Err, "exit status 3") {
		t.Fatalf("exit: %+v", o)
	}
	if pid := te.pidOf(t); pid == old {
		t.Fatalf("the task ran on the dead worker's pid %d", pid)
	}
	if !strings.Contains(te.logs.String(), "task worker exited; restarting it") {
		t.Errorf("no restart in the log:\n%s", te.logs)
	}
}

// TestPoolShutdown: at the deadline the running task's context is
// cancelled and what it returns still arrives; a queued task fails with
// FailShutdown; afterwards dispatch is refused and the workers are gone.
func TestPoolShutdown(t *testing.T) {
	te := startEngine(t, 1, false)
	pids := te.PIDs()
	running := te.dispatch(t, "wait", nil)
	queued := te.dispatch(t, "echo", nil) // waits: the serial worker is busy
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	te.Stop(ctx)
	if o := te.out.wait(t, running); string(o.Result) != `"cancelled: context canceled"` {
		t.Errorf("running task: %+v", o)
	}
	if o := te.out.wait(t, queued); o.Fail != taskproto.FailShutdown {
		t.Errorf("queued task: %+v", o)
	}
	if _, err := te.Dispatch(context.Background(), "/task/echo", []byte(`[]`), nil); !errors.Is(err, ErrStopped) {
		t.Errorf("dispatch after shutdown: %v, want ErrStopped", err)
	}
	for _, pid := range pids {
		if !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			t.Errorf("worker %d still runs after shutdown", pid)
		}
	}
}

// TestPoolStartFails: a worker that exits before its handshake fails
// Start with an error that names the worker.
func TestPoolStartFails(t *testing.T) {
	pool := New(Config{Workers: 1, Command: func() *exec.Cmd { return exec.Command("true") }, Log: slog.New(slog.DiscardHandler)})
	err := pool.Start(func(Outcome) {})
	if err == nil || !strings.Contains(err.Error(), "task worker 0") || !strings.Contains(err.Error(), "did not start") {
		t.Fatalf("Start: %v", err)
	}
}

// TestEngineNotStarted: an engine without a backend refuses tasks.
func TestEngineNotStarted(t *testing.T) {
	var e Engine
	if _, err := e.Dispatch(context.Background(), "/task/x", nil, nil); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Dispatch: %v", err)
	}
	if e.Started() || e.PIDs() != nil {
		t.Fatal("an engine that never started reports a backend")
	}
	e.Stop(context.Background()) // does nothing
}

// fakeBackend finishes every task at once, in dispatch order; its
// Shutdown closes shutdown, when set.
type fakeBackend struct {
	finish   func(Outcome)
	shutdown chan struct{}
}

func (f *fakeBackend) Start(finish func(Outcome)) error { f.finish = finish; return nil }
func (f *fakeBackend) Dispatch(_ context.Context, j Job) error {
	f.finish(Outcome{ID: j.ID, Handler: j.Handler, Result: j.Args})
	return nil
}
func (f *fakeBackend) Shutdown(context.Context) error {
	if f.shutdown != nil {
		close(f.shutdown)
	}
	return nil
}

// TestEngineFinishQueue: a panicking callback is logged and the queue
// goes on, in order; Stop waits for the queued callbacks.
func TestEngineFinishQueue(t *testing.T) {
	logs := &testutil.Buffer{}
	var mu sync.Mutex
	var seen []int64
	var e Engine
	fb := &fakeBackend{shutdown: make(chan struct{})}
	gate := make(chan struct{}) // the first callback holds the queue until Stop begins
	go func() { <-fb.shutdown; close(gate) }()
	err := e.Start(fb, func(o Outcome) {
		<-gate
		mu.Lock()
		seen = append(seen, o.ID)
		mu.Unlock()
		if o.ID == 2 {
			panic("callback boom")
		}
	}, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := e.Dispatch(context.Background(), "/task/x", []byte(`[]`), nil); err != nil {
			t.Fatal(err)
		}
	}
	e.Stop(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 20 {
		t.Fatalf("%d callbacks ran before Stop returned, want 20", len(seen))
	}
	for i, id := range seen {
		if id != int64(i+1) {
			t.Fatalf("callbacks in order %v", seen)
		}
	}
	if !strings.Contains(logs.String(), "task finish callback panicked") || !strings.Contains(logs.String(), "callback boom") {
		t.Fatalf("the panic is not logged:\n%s", logs)
	}
}

func TestRestartDelay(t *testing.T) {
	want := map[int]time.Duration{0: 0, 1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond,
		6: 3200 * time.Millisecond, 7: workerMaxDelay, 50: workerMaxDelay}
	for quick, d := range want {
		if got := restartDelay(quick); got != d {
			t.Errorf("restartDelay(%d) = %v, want %v", quick, got, d)
		}
	}
}
