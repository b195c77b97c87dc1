package jstask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/testutil"
)

// fixture is an embedded server in the test process, a connection to it
// and a directory where the workers mark the runs they start.
type fixture struct {
	t    *testing.T
	url  string
	conn *natsrv.Conn
	mark string
}

// settled waits until no task or end can be delivered again: every
// delivery of the task and result streams acknowledged.
func settled(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	c, _ := envConfig().withDefaults()
	n := c.names()
	testutil.WaitFor(t, 15*time.Second, "the task and result streams to settle", func() bool {
		return testutil.JetStreamSettled(js, n.tasks, n.results)
	})
}

// stored returns how many tasks the task stream holds.
func stored(t *testing.T, js jetstream.JetStream) uint64 {
	c, _ := envConfig().withDefaults()
	st, err := js.Stream(context.Background(), c.names().tasks)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv, err := natsrv.Start(natsrv.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	f := &fixture{t: t, url: srv.URL(), mark: t.TempDir()}
	f.conn = connect(t, f.url)
	return f
}

func connect(t *testing.T, url string) *natsrv.Conn {
	t.Helper()
	conn, err := natsrv.Connect(context.Background(), url, natsrv.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// worker starts a worker process on the fixture's server.
func (f *fixture) worker(env ...string) *proc {
	return startProc(f.t, "worker", append([]string{"JSTASK_URL=" + f.url, "JSTASK_MARK=" + f.mark}, env...)...)
}

// client opens a dispatcher of instance in the test process whose
// results go to the returned recorder.
func (f *fixture) client(instance string) (*Client, *outcomes) {
	f.t.Helper()
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, envConfig(), instance, o.finish)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(c.Close)
	return c, o
}

// runs returns the deliveries on which runs of task id started.
func (f *fixture) runs(id int64) []string {
	m, _ := filepath.Glob(filepath.Join(f.mark, fmt.Sprintf("%d.*", id)))
	return m
}

func dispatch(t *testing.T, c *Client, handler, args string) int64 {
	t.Helper()
	id, err := c.Dispatch(context.Background(), Task{Handler: handler, Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// dispatchMany dispatches n tasks of handler with args from 8 goroutines
// at once, as concurrent requests do (one after another, 1,000 take
// seconds under the race detector), and returns their ids.
func dispatchMany(t *testing.T, c *Client, n int, handler, args string) []int64 {
	t.Helper()
	ids, errs := make([]int64, n), make([]error, n)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < n; i += 8 {
				ids[i], errs[i] = c.Dispatch(context.Background(), Task{Handler: handler, Args: json.RawMessage(args)})
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return ids
}

type outcome struct {
	result json.RawMessage
	err    error
}

// outcomes records the finish calls.
type outcomes struct {
	mu   sync.Mutex
	byID map[int64][]outcome
	js   jetstream.JetStream // where once looks for deliveries to come
}

func (o *outcomes) finish(id int64, _ string, result json.RawMessage, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.byID[id] = append(o.byID[id], outcome{append(json.RawMessage(nil), result...), err})
}

func (o *outcomes) count(id int64) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.byID[id])
}

func (o *outcomes) total() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, v := range o.byID {
		n += len(v)
	}
	return n
}

// wait waits until every id has finished and returns the first outcome
// of each.
func (o *outcomes) wait(t *testing.T, within time.Duration, ids ...int64) map[int64]outcome {
	t.Helper()
	testutil.WaitFor(t, within, "task results", func() bool {
		for _, id := range ids {
			if o.count(id) == 0 {
				return false
			}
		}
		return true
	})
	o.mu.Lock()
	defer o.mu.Unlock()
	got := map[int64]outcome{}
	for _, id := range ids {
		got[id] = o.byID[id][0]
	}
	return got
}

// once checks, once JetStream has nothing to deliver again (settled),
// that each id finished exactly once.
func (o *outcomes) once(t *testing.T, ids ...int64) {
	t.Helper()
	settled(t, o.js)
	for _, id := range ids {
		if n := o.count(id); n != 1 {
			t.Errorf("task %d finished %d times, want once", id, n)
		}
	}
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return m
}

func TestTasksRunOnWorkerAndResultsComeBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, o := f.client("a")
	f.worker("JSTASK_CONC=4")
	ctx := context.Background()
	echo, err := c.Dispatch(ctx, Task{Handler: "/task/echo", Args: json.RawMessage(`[1,"two"]`),
		RequestID: "req-7", TraceContext: map[string]string{"traceparent": "00-abc-def-01"}})
	if err != nil {
		t.Fatal(err)
	}
	fail := dispatch(t, c, "/task/fail", `[]`)
	pan := dispatch(t, c, "/task/panic", `[]`)
	big := dispatch(t, c, "/task/big", `[]`)
	missing := dispatch(t, c, "/task/nope", `[]`)
	got := o.wait(t, 20*time.Second, echo, fail, pan, big, missing)

	if got[echo].err != nil {
		t.Fatalf("echo: %v", got[echo].err)
	}
	m := decode(t, got[echo].result)
	if fmt.Sprint(m["args"]) != "[1 two]" || m["deliveries"] != 1.0 || m["request_id"] != "req-7" ||
		fmt.Sprint(m["trace"]) != "map[traceparent:00-abc-def-01]" {
		t.Errorf("echo result = %s", got[echo].result)
	}
	wantFail := map[int64][2]string{fail: {KindError, "boom"}, pan: {KindPanic, "kaboom"},
		big: {KindResult, "the result of 9437186 bytes is over the server's bound"}, missing: {"load", "no such task /task/nope"}}
	for id, want := range wantFail {
		var te *TaskError
		if !errors.As(got[id].err, &te) {
			t.Errorf("task %d: err = %v, want a *TaskError", id, got[id].err)
			continue
		}
		if te.Kind != want[0] || te.Msg != want[1] || te.ID != id || te.Deliveries != 1 {
			t.Errorf("task %d: %+v, want kind %q msg %q", id, te, want[0], want[1])
		}
	}
	if errors.Is(got[fail].err, ErrMaxDeliver) {
		t.Error("a failed task matches ErrMaxDeliver")
	}
	o.once(t, echo, fail, pan, big, missing)
}

func TestTaskOfKilledWorkerIsDeliveredAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, o := f.client("a")
	w1 := f.worker()
	id := dispatch(t, c, "/task/sleep", `[60000, 100]`)
	testutil.WaitFor(t, 10*time.Second, "the first run", func() bool { return len(f.runs(id)) == 1 })
	w1.kill()
	f.worker()
	got := o.wait(t, 10*time.Second, id)
	if got[id].err != nil {
		t.Fatal(got[id].err)
	}
	if m := decode(t, got[id].result); m["deliveries"] != 2.0 {
		t.Errorf("result %s, want deliveries 2", got[id].result)
	}
	o.once(t, id)
	if r := f.runs(id); len(r) != 2 {
		t.Errorf("runs %v, want 2", r)
	}
}

func TestTaskGivenUpAfterMaxDeliver(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, o := f.client("a")
	env := []string{"JSTASK_URL=" + f.url, "JSTASK_MARK=" + f.mark, "JSTASK_MAXDELIVER=2"}
	id := dispatch(t, c, "/task/crash", `[]`)
	for range 2 { // each run kills its worker
		launch(t, "worker", env...).waitExit(t, 15*time.Second)
	}
	startProc(t, "worker", env...)
	got := o.wait(t, 10*time.Second, id)
	var te *TaskError
	if !errors.Is(got[id].err, ErrMaxDeliver) || !errors.As(got[id].err, &te) {
		t.Fatalf("err = %v, want ErrMaxDeliver", got[id].err)
	}
	if te.Deliveries != 2 || te.Handler != "/task/crash" || te.ID != id {
		t.Errorf("%+v, want 2 deliveries of /task/crash", te)
	}
	o.once(t, id)
	if r := f.runs(id); len(r) != 2 {
		t.Errorf("runs %v, want 2", r)
	}
}

func TestDuplicateDispatchIsDropped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, o := f.client("a")
	ctx := context.Background()
	id, err := c.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		got, err := c.Dispatch(ctx, Task{ID: id, Handler: "/task/echo", Args: json.RawMessage(`[]`)})
		if err != nil || got != id {
			t.Fatalf("Dispatch = %d, %v; want %d", got, err, id)
		}
	}
	st, err := f.conn.JS.Stream(ctx, "ZEALGO_TASKS")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("stream holds %+v (%v), want 1 message", info.State, err)
	}
	f.worker()
	o.wait(t, 10*time.Second, id)
	o.once(t, id)
	if r := f.runs(id); len(r) != 1 {
		t.Errorf("runs %v, want 1", r)
	}
}

func TestTasksQueuedWithoutWorkersRunWhenOneStarts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, o := f.client("a")
	var ids []int64
	for i := range 20 {
		ids = append(ids, dispatch(t, c, "/task/echo", fmt.Sprintf("[%d]", i)))
	}
	testutil.WaitFor(t, 10*time.Second, "the 20 tasks stored", func() bool { return stored(t, f.conn.JS) == 20 })
	if n := o.total(); n != 0 {
		t.Fatalf("%d tasks finished with no worker", n)
	}
	f.worker("JSTASK_CONC=8")
	got := o.wait(t, 10*time.Second, ids...)
	for i, id := range ids {
		if m := decode(t, got[id].result); fmt.Sprint(m["args"]) != fmt.Sprintf("[%d]", i) {
			t.Errorf("task %d: %s", id, got[id].result)
		}
	}
	o.once(t, ids...)
}

// TestLongTaskIsKeptAlive: a task that runs 3.5 times AckWait is not
// delivered again while it runs. Two workers: a worker holds back a task
// delivered again until its own running tasks return, so with one worker
// the test passed without renewals; the idle one would run it at once.
func TestLongTaskIsKeptAlive(t *testing.T) {
	f := newFixture(t)
	c, o := f.client("a")
	f.worker("JSTASK_CONC=8")
	f.worker("JSTASK_CONC=8")
	id := dispatch(t, c, "/task/sleep", `[3500]`) // 3.5 × AckWait
	got := o.wait(t, 15*time.Second, id)
	if m := decode(t, got[id].result); m["deliveries"] != 1.0 {
		t.Errorf("result %s, want deliveries 1", got[id].result)
	}
	if r := f.runs(id); len(r) != 1 {
		t.Errorf("runs %v, want 1", r)
	}
}

func TestWorkerShutdownGivesTaskBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, o := f.client("a")
	w1 := f.worker("JSTASK_GRACE_MS=200")
	id := dispatch(t, c, "/task/sleep", `[60000, 50]`)
	testutil.WaitFor(t, 10*time.Second, "the first run", func() bool { return len(f.runs(id)) == 1 })
	w1.stop(t)
	if n := o.count(id); n != 0 {
		t.Fatalf("a task cut short by the shutdown finished: %v", o.byID[id])
	}
	f.worker()
	got := o.wait(t, 5*time.Second, id) // given back: no ack wait
	if got[id].err != nil {
		t.Fatal(got[id].err)
	}
	o.once(t, id)
}

func TestConcurrencyModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		conc, tasks int
		peak        func(float64) bool
	}{
		{1, 3, func(p float64) bool { return p == 1 }},
		{4, 4, func(p float64) bool { return p == 4 }},
	} {
		t.Run(fmt.Sprint(tc.conc), func(t *testing.T) {
			f := newFixture(t)
			c, o := f.client("a")
			var ids []int64
			for range tc.tasks {
				ids = append(ids, dispatch(t, c, "/task/sleep", `[400]`))
			}
			f.worker(fmt.Sprint("JSTASK_CONC=", tc.conc))
			got := o.wait(t, 15*time.Second, ids...)
			peak := 0.0
			for _, id := range ids {
				peak = max(peak, decode(t, got[id].result)["peak"].(float64))
			}
			if !tc.peak(peak) {
				t.Errorf("Concurrency %d: peak %v tasks at once", tc.conc, peak)
			}
		})
	}
}

func TestTaskIDsAreUniqueAcrossInstancesAndRestarts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	seen := map[int64]bool{}
	var mu sync.Mutex
	take := func(c *Client, n int) {
		for range n {
			id, err := c.NextID(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			if seen[id] || id <= 0 {
				t.Errorf("id %d handed out twice or not positive", id)
			}
			seen[id] = true
			mu.Unlock()
		}
	}
	a, _ := f.client("a")
	b, _ := f.client("b")
	var wg sync.WaitGroup
	for _, c := range []*Client{a, b, a, b} {
		wg.Go(func() { take(c, 1500) })
	}
	wg.Wait()
	a2, _ := f.client("a") // the same instance after a restart
	take(a2, 10)
	if len(seen) != 6010 {
		t.Errorf("%d ids, want 6010", len(seen))
	}
}

func TestOpenRefusesBadNames(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, inst := range []string{"", "a.b", "a b", "a>"} {
		if _, err := Open(context.Background(), f.conn.JS, Config{}, inst, nil); err == nil {
			t.Errorf("instance %q accepted", inst)
		}
	}
	if _, err := Open(context.Background(), f.conn.JS, Config{Prefix: "x.y"}, "a", nil); err == nil {
		t.Error("prefix x.y accepted")
	}
	c, _ := f.client("a")
	for _, h := range []string{"", "/task/a\r\nX: y"} {
		if _, err := c.Dispatch(context.Background(), Task{Handler: h}); err == nil {
			t.Errorf("handler %q accepted", h)
		}
	}
}
