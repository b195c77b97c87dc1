package jstask

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCrashingTaskIsIsolated: a task that kills its worker is queued
// with 30 ordinary ones (100 ms on their first run, when the crash ends
// it, 10 ms on the next, alone) on one worker that runs 64 at once and
// gives a task up after 2 deliveries (restarted whenever it dies): the 30
// run, the crashing one is given up to the dead letters, and can be
// retried from there.
func TestCrashingTaskIsIsolated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, o := f.client("a")
	crash := dispatch(t, c, "/task/crash", `[]`)
	var ids []int64
	for range 30 {
		ids = append(ids, dispatch(t, c, "/task/sleep", `[100, 10]`))
	}
	stop, looped := make(chan struct{}), make(chan struct{})
	defer func() { close(stop); <-looped }() // before the cleanups kill the last worker
	go func() {
		defer close(looped)
		for {
			p := launch(t, "worker", "JSTASK_URL="+f.url, "JSTASK_MARK="+f.mark, "JSTASK_CONC=64", "JSTASK_MAXDELIVER=2")
			select {
			case <-p.exited:
			case <-stop:
				p.kill()
				return
			}
		}
	}()
	got := o.wait(t, 60*time.Second, append(ids, crash)...)
	for _, id := range ids {
		if got[id].err != nil {
			t.Errorf("ordinary task %d: %v", id, got[id].err)
		}
	}
	if !errors.Is(got[crash].err, ErrMaxDeliver) {
		t.Errorf("crashing task: %v, want ErrMaxDeliver", got[crash].err)
	}
	d, err := OpenDead(context.Background(), f.conn.JS, envConfig())
	if err != nil {
		t.Fatal(err)
	}
	list, err := d.List(context.Background(), 0)
	if err != nil || len(list) != 1 || list[0].ID != crash || list[0].Kind != KindDeliveries || list[0].Handler != "/task/crash" {
		t.Fatalf("dead letters: %+v, %v; want the crashing task alone", list, err)
	}
	again, err := d.Retry(context.Background(), crash)
	if err != nil || again == crash {
		t.Fatalf("retry: %d, %v", again, err)
	}
	if _, err := d.Get(context.Background(), crash); err == nil {
		t.Error("the retried task is still in the dead letters")
	}
	o.wait(t, 60*time.Second, again)
	if n, err := d.Purge(context.Background(), 0); err != nil || n != 1 {
		t.Errorf("purge: %d, %v; want the retried task, given up again", n, err)
	}
}

// TestFailedTaskRetriedWithBackoff: a task failing on its first run
// succeeds on its second; one that always fails runs its three attempts,
// the backoff apart, then ends in the dead letters.
func TestFailedTaskRetriedWithBackoff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, o := f.client("a")
	f.worker("JSTASK_CONC=4")
	flaky, err := c.Dispatch(context.Background(), Task{Handler: "/task/flaky", Attempts: 2, Backoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	fail, err := c.Dispatch(context.Background(), Task{Handler: "/task/fail", Attempts: 3, Backoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	got := o.wait(t, 20*time.Second, flaky, fail)
	if got[flaky].err != nil || decode(t, got[flaky].result)["deliveries"] != 2.0 {
		t.Errorf("flaky task: %s %v, want success on delivery 2", got[flaky].result, got[flaky].err)
	}
	var te *TaskError
	if !errors.As(got[fail].err, &te) || te.Kind != KindError || te.Deliveries != 3 {
		t.Errorf("failing task: %v, want its error after 3 deliveries", got[fail].err)
	}
	if took := time.Since(start); took < 600*time.Millisecond { // 200ms + 400ms of backoff
		t.Errorf("three attempts took %v, less than their backoff", took)
	}
	if n := len(f.runs(fail)); n != 3 {
		t.Errorf("the failing task ran %d times, want 3", n)
	}
	d, _ := OpenDead(context.Background(), f.conn.JS, envConfig())
	if dt, err := d.Get(context.Background(), fail); err != nil || dt.Error != "boom" {
		t.Errorf("dead letter: %+v, %v", dt, err)
	}
}

// TestTaskTimeLimitRecyclesWorker: a task that ignores its time limit
// counts a failed attempt (KindTimeout) and its worker process ends, to
// be replaced.
func TestTaskTimeLimitRecyclesWorker(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, o := f.client("a")
	w := f.worker()
	id, err := c.Dispatch(context.Background(), Task{Handler: "/task/stuck", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	got := o.wait(t, 20*time.Second, id)
	var te *TaskError
	if !errors.As(got[id].err, &te) || te.Kind != KindTimeout {
		t.Errorf("stuck task: %v, want KindTimeout", got[id].err)
	}
	w.waitExit(t, 10*time.Second)
}

// TestDispatchKeyAndQueueBound: a second dispatch with the same key gets
// the first one's id and makes no task; a queue at its bound refuses a
// dispatch with ErrQueueFull.
func TestDispatchKeyAndQueueBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := envConfig()
	cfg.MaxQueued = 3
	c, err := Open(context.Background(), f.conn.JS, cfg, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Dispatch(context.Background(), Task{Handler: "/task/echo", Key: "order-7"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Dispatch(context.Background(), Task{Handler: "/task/echo", Key: "order-7"})
	if err != nil || again != first {
		t.Errorf("second dispatch with the key: %d, %v; want %d", again, err, first)
	}
	if n := stored(t, f.conn.JS); n != 1 {
		t.Errorf("%d tasks queued, want 1", n)
	}
	dispatch(t, c, "/task/echo", `[]`)
	dispatch(t, c, "/task/echo", `[]`)
	_, err = c.Dispatch(context.Background(), Task{Handler: "/task/echo"})
	if !errors.Is(err, ErrQueueFull) || !strings.Contains(err.Error(), "3 tasks") {
		t.Errorf("dispatch to a full queue: %v, want ErrQueueFull", err)
	}
}
