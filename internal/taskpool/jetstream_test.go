package taskpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/taskproto"
	"github.com/zealgo/zealgo/internal/testutil"
)

// ends counts what an engine's finish callback receives, per task.
type ends struct {
	mu  sync.Mutex
	got map[int64][]Outcome
}

func (e *ends) finish(o Outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got[o.ID] = append(e.got[o.ID], o)
}

func (e *ends) count(id int64) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.got[id])
}

// wait returns the first end of task id.
func (e *ends) wait(t *testing.T, id int64, within time.Duration) Outcome {
	t.Helper()
	testutil.WaitFor(t, within, fmt.Sprintf("the end of task %d", id), func() bool { return e.count(id) > 0 })
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.got[id][0]
}

// natsFixture is an embedded NATS server with JetStream in a temp dir.
type natsFixture struct {
	url  string
	conn *natsrv.Conn
}

func startNATS(t *testing.T) *natsFixture {
	t.Helper()
	srv, err := natsrv.Start(natsrv.Config{DataDir: t.TempDir(), Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	conn, err := natsrv.Connect(context.Background(), srv.URL(), natsrv.ConnectOptions{Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return &natsFixture{url: srv.URL(), conn: conn}
}

// jsEngine is an engine of one instance over JetStream, with workers
// processes of this test binary.
type jsEngine struct {
	*Engine
	b    *JetStream
	ends *ends
	logs *testutil.Buffer
}

// startJS starts the engine of instance with workers local worker
// processes (0: a dispatcher only).
func (f *natsFixture) startJS(t *testing.T, instance string, workers int) *jsEngine {
	t.Helper()
	logs := &testutil.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := NewJetStream(JetStreamConfig{
		Pool: Config{Workers: workers, Coroutine: true, Command: testCommand, Log: log},
		JS:   f.conn.JS, MaxPayload: f.conn.NC.MaxPayload(), Instance: instance,
		Queue: taskproto.QueueConfig{URL: f.url, Token: "s3cret", AckWait: time.Second, MaxDeliver: 2,
			Concurrency: 8, Grace: time.Second},
	})
	je := &jsEngine{Engine: &Engine{}, b: b, ends: &ends{got: map[int64][]Outcome{}}, logs: logs}
	if err := je.Start(b, je.ends.finish, log); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { je.stop() })
	return je
}

// unacked returns how many tasks the workers have pulled and not yet
// acknowledged.
func (f *natsFixture) unacked(t *testing.T) int {
	c, err := f.conn.JS.Consumer(context.Background(), "ZEALGO_TASKS", "workers")
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.NumAckPending
}

// settled waits until no task or end can be delivered again: every
// delivery of the task and result streams acknowledged.
func (f *natsFixture) settled(t *testing.T) {
	t.Helper()
	testutil.WaitFor(t, 15*time.Second, "the task and result streams to settle", func() bool {
		return testutil.JetStreamSettled(f.conn.JS, "ZEALGO_TASKS", "ZEALGO_RESULTS")
	})
}

// streamMsgs returns how many messages (tasks, ends) the stream holds.
func (f *natsFixture) streamMsgs(t *testing.T, stream string) uint64 {
	st, err := f.conn.JS.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

func (je *jsEngine) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	je.Stop(ctx)
}

func (je *jsEngine) dispatch(t *testing.T, task string, meta map[string]string, args ...any) int64 {
	t.Helper()
	enc, err := taskproto.EncodeArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	id, err := je.Dispatch(context.Background(), "/task/"+task, enc, meta)
	if err != nil {
		t.Fatalf("dispatch %s: %v", task, err)
	}
	return id
}

func result(t *testing.T, o Outcome) any {
	t.Helper()
	if o.Fail != "" {
		t.Fatalf("task %d (%s) failed: %s %s", o.ID, o.Handler, o.Fail, o.Err)
	}
	var v any
	if err := json.Unmarshal(o.Result, &v); err != nil {
		t.Fatalf("task %d: result %q: %v", o.ID, o.Result, err)
	}
	return v
}

// TestJetStreamRoundTrip: two instances share the streams; each task
// runs in a worker process that pulled it and its end comes back to the
// instance that dispatched it, exactly once, with its handler; the
// request id reaches the task; ids never collide; failures keep their
// class; arguments over the server's bound are refused at dispatch.
func TestJetStreamRoundTrip(t *testing.T) {
	t.Parallel()
	f := startNATS(t)
	a, b := f.startJS(t, "a", 1), f.startJS(t, "b", 1)
	if len(a.PIDs()) != 1 || len(b.PIDs()) != 1 {
		t.Fatalf("worker pids %v %v", a.PIDs(), b.PIDs())
	}
	ids := map[int64]string{}
	var fromA, fromB []int64
	for i := range 20 {
		ia := a.dispatch(t, "echo", nil, i)
		ib := b.dispatch(t, "echo", nil, i)
		for _, id := range []int64{ia, ib} {
			if ids[id] != "" {
				t.Fatalf("task id %d handed out twice", id)
			}
			ids[id] = "x"
		}
		fromA, fromB = append(fromA, ia), append(fromB, ib)
	}
	for i, id := range fromA {
		if o := a.ends.wait(t, id, 15*time.Second); o.Handler != "/task/echo" || fmt.Sprint(result(t, o)) != fmt.Sprintf("[%d]", i) {
			t.Errorf("task %d: %+v", id, o)
		}
	}
	for _, id := range fromB {
		b.ends.wait(t, id, 15*time.Second)
		if a.ends.count(id) != 0 {
			t.Errorf("the end of b's task %d reached a", id)
		}
	}
	meta := a.ends.wait(t, a.dispatch(t, "meta", map[string]string{MetaRequestID: "req-42"}), 15*time.Second)
	if got := result(t, meta); fmt.Sprint(got) != "map[request_id:req-42]" {
		t.Errorf("meta task saw %v", got)
	}
	if d := result(t, a.ends.wait(t, a.dispatch(t, "delivery", nil, 0), 15*time.Second)); d != float64(1) {
		t.Errorf("first delivery reported as %v", d)
	}
	for task, class := range map[string]string{"fail": taskproto.FailArgs, "panic": taskproto.FailPanic, "nosuch": taskproto.FailLoad} {
		o := a.ends.wait(t, a.dispatch(t, task, nil, "boom"), 15*time.Second)
		if o.Fail != class || o.Handler != "/task/"+task || o.Err == "" {
			t.Errorf("task %s: %+v, want class %s", task, o, class)
		}
	}
	big := json.RawMessage(`["` + strings.Repeat("x", int(f.conn.NC.MaxPayload())) + `"]`)
	if _, err := a.Dispatch(context.Background(), "/task/echo", big, nil); err == nil || !strings.Contains(err.Error(), "bound on this NATS server") {
		t.Errorf("oversized arguments: %v", err)
	}
	f.settled(t) // no second end of any task can come now
	for _, e := range []*jsEngine{a, b} {
		e.ends.mu.Lock()
		for id, os := range e.ends.got {
			if len(os) != 1 {
				t.Errorf("task %d ended %d times", id, len(os))
			}
		}
		e.ends.mu.Unlock()
	}
}

// TestJetStreamRedelivery: a task whose worker is killed mid-run is
// delivered again, to the restarted worker, and ends once, on a later
// delivery; a task that kills its worker on every delivery ends as
// failed after MaxDeliver deliveries.
func TestJetStreamRedelivery(t *testing.T) {
	t.Parallel()
	f := startNATS(t)
	e := f.startJS(t, "solo", 1)
	pid := e.PIDs()[0]
	id := e.dispatch(t, "delivery", nil, 1)
	testutil.WaitFor(t, 15*time.Second, "the worker to pull the task", func() bool { return f.unacked(t) == 1 })
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := e.ends.wait(t, id, 15*time.Second)
	// Delivery 2, or 3 when the worker pulling several gave delivery 2
	// back to pull it alone (jstask runs a task delivered again alone).
	if d := result(t, o); d != float64(2) && d != float64(3) {
		t.Fatalf("the task ended on delivery %v, want 2 or 3", d)
	}
	if p := e.PIDs(); len(p) != 1 || p[0] == pid {
		t.Errorf("worker not restarted: %v (killed %d)", p, pid)
	}
	crash := e.dispatch(t, "exit", nil)
	o = e.ends.wait(t, crash, 30*time.Second)
	if o.Fail != taskproto.FailDeliveries || !strings.Contains(o.Err, "2 deliveries") {
		t.Errorf("a task that kills its worker: %+v", o)
	}
	f.settled(t)
	if e.ends.count(id) != 1 || e.ends.count(crash) != 1 {
		t.Errorf("ends: %d and %d, want one each", e.ends.count(id), e.ends.count(crash))
	}
}

// TestJetStreamWaits: a task dispatched while no worker runs anywhere
// waits in the queue, and runs when a worker comes; its end waits for its
// dispatcher, which had stopped meanwhile, and reaches it after its
// restart under the same instance name.
func TestJetStreamWaits(t *testing.T) {
	t.Parallel()
	f := startNATS(t)
	web := f.startJS(t, "web", 0)
	id := web.dispatch(t, "echo", nil, "queued")
	testutil.WaitFor(t, 15*time.Second, "the task stored", func() bool { return f.streamMsgs(t, "ZEALGO_TASKS") == 1 })
	if web.ends.count(id) != 0 {
		t.Fatal("a task ended with no worker running")
	}
	web.stop()
	if _, err := web.Dispatch(context.Background(), "/task/echo", []byte(`[]`), nil); !errors.Is(err, ErrStopped) {
		t.Errorf("dispatch after Stop: %v", err)
	}
	workers := f.startJS(t, "workers", 1)
	testutil.WaitFor(t, 15*time.Second, "the task's end stored for web", func() bool { return f.streamMsgs(t, "ZEALGO_RESULTS") == 1 })
	web2 := f.startJS(t, "web", 0)
	if got := result(t, web2.ends.wait(t, id, 15*time.Second)); fmt.Sprint(got) != "[queued]" {
		t.Errorf("result %v", got)
	}
	if workers.ends.count(id) != 0 {
		t.Error("the end went to the instance whose worker ran the task")
	}
}
