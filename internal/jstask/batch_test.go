package jstask

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zealgo/zealgo/internal/testutil"
)

// resultMsgs returns how many messages results stream 0 of c holds.
func resultMsgs(t *testing.T, c *Client) uint64 {
	t.Helper()
	name, _ := c.n.resultStream(0)
	st, err := c.js.Stream(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return st.CachedInfo().State.Msgs
}

// TestResultsBatchedUnderLoad: with Config.ResultBatch, 400 tasks
// dispatched at once by 32 goroutines each finish once with their own
// result, and their results take fewer messages than tasks: the results
// that end while others are being stored go together.
func TestResultsBatchedUnderLoad(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := Config{Prefix: "batch", AckWait: 5 * time.Second, ResultBatch: 64}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	inProcess(t, f, WorkerConfig{Config: cfg, Concurrency: 32, PollWait: 200 * time.Millisecond}, echoArgs)
	const n = 400
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 32 {
				id, err := c.Dispatch(context.Background(), Task{Handler: "/task/echo", Args: json.RawMessage(strconv.Itoa(i))})
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = id
			}
		}()
	}
	wg.Wait()
	got := o.wait(t, 30*time.Second, ids...)
	for i, id := range ids {
		if string(got[id].result) != strconv.Itoa(i) || got[id].err != nil {
			t.Errorf("task %d: result %s, err %v, want %d", id, got[id].result, got[id].err, i)
		}
	}
	o.once(t, ids...)
	msgs := resultMsgs(t, c)
	t.Logf("%d results in %d messages", n, msgs)
	if msgs == 0 || msgs >= n {
		t.Errorf("%d results took %d messages, want fewer", n, msgs)
	}
}

// storeBatch stores a batch of results of ts as a worker does, and
// returns the task messages pulled for them, unacknowledged, as a worker
// that dies after storing the batch leaves them.
func storeBatch(t *testing.T, c *Client, ts []Task) {
	t.Helper()
	ps := make([]pendingResult, len(ts))
	for i, task := range ts {
		ps[i] = pendingResult{t: task, result: json.RawMessage(`"first"`), n: 1}
	}
	msg, err := batchMsg(c.n, ps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
}

// TestBatchedResultIsNotHandedOverTwice: a worker stored a batch of
// results and died before acknowledging its tasks (here: the tasks are
// pulled and the batch stored by hand); the instance hands the batch
// over and restarts. The tasks delivered again are acknowledged without
// running (the worker finds their results in the batch), and a result of
// a second run of one of them (marked as such) is not handed over to the
// restarted instance, while such a result of a task never batched is.
func TestBatchedResultIsNotHandedOverTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := Config{Prefix: "rerun", AckWait: time.Second, ResultAckWait: time.Second, ResultBatch: 64}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range 3 {
		ids = append(ids, dispatch(t, c, "/task/plain", `[]`))
	}
	tasks := pullTasks(t, f, c, 3) // a worker that dies holding them
	storeBatch(t, c, tasks)
	o.wait(t, 10*time.Second, ids...)
	c.Close()
	c2, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	d := &deliveries{seen: map[int64][]int{}}
	inProcessWorker(t, f, cfg, d)
	testutil.WaitFor(t, 15*time.Second, "the tasks to be settled", func() bool {
		return testutil.JetStreamSettled(f.conn.JS, c.n.tasks)
	})
	for _, id := range ids {
		if runs := d.of(id); len(runs) > 0 {
			t.Errorf("task %d, whose result is batched, ran again (deliveries %v)", id, runs)
		}
	}
	// A second run's result, as a worker that did not find the batch sends it.
	other := dispatch(t, c2, "/task/plain", `[]`)
	o.wait(t, 10*time.Second, other)
	for _, task := range append(tasks, Task{ID: other + 1000, Handler: "/task/plain", Instance: "i1", Dispatched: time.Now()}) {
		msg := resultMsg(c.n, task, json.RawMessage(`"again"`), nil, 2)
		msg.Header.Set(hdrRerun, strconv.FormatInt(task.Dispatched.UnixNano(), 10))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := f.conn.JS.PublishMsg(ctx, msg)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	o.wait(t, 10*time.Second, other+1000)
	o.once(t, append(ids, other, other+1000)...)
	for _, id := range ids {
		if r := o.wait(t, time.Second, id)[id].result; string(r) != `"first"` {
			t.Errorf("task %d: result %s, want the batched one", id, r)
		}
	}
}

// pullTasks pulls n tasks from the workers' consumer without
// acknowledging them and returns them decoded.
func pullTasks(t *testing.T, f *fixture, c *Client, n int) []Task {
	t.Helper()
	cons, err := ensureWorkers(context.Background(), f.conn.JS, c.cfg, c.n.tasks)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(n, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var out []Task
	for m := range batch.Messages() {
		task, err := decodeTask(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, task)
	}
	if len(out) != n {
		t.Fatalf("pulled %d tasks, want %d", len(out), n)
	}
	return out
}

// TestBatchOfUnknownFormatIsKept: a batch of a format this version does
// not read (a newer zealgo's) is handed to no finish callback and not
// acknowledged, so that it waits for an instance that reads it.
func TestBatchOfUnknownFormatIsKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := Config{Prefix: "fmt", ResultAckWait: time.Second}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg, err := batchMsg(c.n, []pendingResult{{t: Task{ID: 7, Handler: "/task/x", Instance: "i1"}, result: json.RawMessage(`1`), n: 1}})
	if err != nil {
		t.Fatal(err)
	}
	msg.Header.Set(hdrBatch, "99")
	if _, err := f.conn.JS.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	known := Task{ID: 8, Handler: "/task/x", Instance: "i1"}
	if _, err := f.conn.JS.PublishMsg(context.Background(), resultMsg(c.n, known, json.RawMessage(`2`), nil, 1)); err != nil {
		t.Fatal(err)
	}
	o.wait(t, 10*time.Second, 8) // a result alone, as every version sends, read after the batch
	cons, err := f.conn.JS.Consumer(context.Background(), c.n.results, "results-i1")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.AckFloor.Stream != 0 {
		t.Errorf("the batch of an unknown format was acknowledged (ack floor %d)", info.AckFloor.Stream)
	}
	if n := o.count(7) + o.count(0); n != 0 {
		t.Errorf("a batch of an unknown format was handed over %d times", n)
	}
}

// TestWorkerKilledMidBatch: two workers that batch their results share
// 1,000 tasks queued; one is killed mid-load, the dispatching instance restarts
// at the same time, and another worker takes the dead one's place. Every
// task finishes exactly once, the tasks the dead worker held run again
// with a delivery above 1, and the results took fewer messages than
// tasks.
func TestWorkerKilledMidBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := envConfig()
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, cfg, "a", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	ids := dispatchMany(t, c, 1000, "/task/sleep", `[2]`) // queued first, so that results end in bursts
	w1 := f.worker("JSTASK_CONC=32", "JSTASK_RESULT_BATCH=64")
	f.worker("JSTASK_CONC=32", "JSTASK_RESULT_BATCH=64")
	testutil.WaitFor(t, 20*time.Second, "200 results", func() bool { return o.total() >= 200 })
	w1.kill()
	c.Close()
	c2, err := Open(context.Background(), f.conn.JS, cfg, "a", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	f.worker("JSTASK_CONC=32", "JSTASK_RESULT_BATCH=64")
	again := o.succeeded(t, 30*time.Second, ids...)
	o.once(t, ids...)
	msgs := resultMsgs(t, c2)
	t.Logf("%d tasks delivered again after the kill; %d results in %d messages", again, len(ids), msgs)
	if msgs >= uint64(len(ids)) {
		t.Errorf("%d results took %d messages, want fewer", len(ids), msgs)
	}
}

// TestTasksOfAnEarlierVersionGetResultsAlone: tasks published as an
// earlier zealgo does (no word that their instance reads batches) run on
// a worker that batches, and each result goes alone, in the format that
// version reads, even with the tasks queued up.
func TestTasksOfAnEarlierVersionGetResultsAlone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := Config{Prefix: "old", AckWait: 5 * time.Second, ResultBatch: 64}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 60
	var ids []int64
	for i := range n {
		task := Task{ID: int64(1000 + i), Handler: "/task/echo", Args: json.RawMessage(strconv.Itoa(i)), Instance: "i1", Dispatched: time.Now().UTC()}
		body, _ := json.Marshal(task)
		msg := nats.NewMsg(c.n.taskSubj)
		msg.Data = body
		id := strconv.FormatInt(task.ID, 10)
		msg.Header.Set(hdrID, id)
		msg.Header.Set(hdrInstance, "i1")
		msg.Header.Set(hdrHandler, task.Handler)
		if _, err := f.conn.JS.PublishMsg(context.Background(), msg, jetstream.WithMsgID(id)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	inProcess(t, f, WorkerConfig{Config: cfg, Concurrency: 32, PollWait: 200 * time.Millisecond}, echoArgs)
	got := o.wait(t, 20*time.Second, ids...)
	for i, id := range ids {
		if string(got[id].result) != strconv.Itoa(i) {
			t.Errorf("task %d: result %s, want %d", id, got[id].result, i)
		}
	}
	o.once(t, ids...)
	if msgs := resultMsgs(t, c); msgs != n {
		t.Errorf("%d results took %d messages, want one each", n, msgs)
	}
}

// TestBatchStoredAfterARerunsResult: a task's result of a second run
// (marked, alone) is stored before the batch that holds the result of
// its first run, and the instance reads both only then (it was down):
// it leaves the marked result to the batch, and hands the batch's over.
func TestBatchStoredAfterARerunsResult(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := Config{Prefix: "order", ResultAckWait: time.Second}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	task := Task{ID: 41, Handler: "/task/plain", Instance: "i1", Dispatched: time.Now().Add(-time.Minute)}
	rerun := resultMsg(c.n, task, json.RawMessage(`"second"`), nil, 2)
	rerun.Header.Set(hdrRerun, strconv.FormatInt(task.Dispatched.UnixNano(), 10))
	if _, err := f.conn.JS.PublishMsg(context.Background(), rerun); err != nil {
		t.Fatal(err)
	}
	storeBatch(t, c, []Task{task, {ID: 42, Handler: "/task/plain", Instance: "i1", Dispatched: task.Dispatched}})
	c2, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	got := o.wait(t, 10*time.Second, 41, 42)
	testutil.WaitFor(t, 10*time.Second, "the results to be read", func() bool {
		return testutil.JetStreamSettled(f.conn.JS, c.n.results)
	})
	if n := o.count(41); n != 1 || string(got[41].result) != `"first"` {
		t.Errorf("task 41 finished %d times, first with %s; want once, with the batch's result", n, got[41].result)
	}
}

// echoArgs is a Runner whose result is the task's arguments.
func echoArgs(_ context.Context, t Task, _ int) (json.RawMessage, error) { return t.Args, nil }
