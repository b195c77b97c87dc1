package jstask

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// deliveries records the delivery each task's runs saw, by task id.
type deliveries struct {
	mu   sync.Mutex
	seen map[int64][]int
}

func (d *deliveries) run(_ context.Context, t Task, n int) (json.RawMessage, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen[t.ID] = append(d.seen[t.ID], n)
	return json.RawMessage(`null`), nil
}

func (d *deliveries) of(id int64) []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]int(nil), d.seen[id]...)
}

// inProcessWorker runs a worker of cfg in the test process until the test ends.
func inProcessWorker(t *testing.T, f *fixture, cfg Config, d *deliveries) {
	t.Helper()
	inProcess(t, f, WorkerConfig{Config: cfg, PollWait: 200 * time.Millisecond}, d.run)
}

// inProcess runs a worker of wc in the test process until the test ends.
func inProcess(t *testing.T, f *fixture, wc WorkerConfig, run Runner) {
	t.Helper()
	w, err := NewWorker(context.Background(), f.conn.JS, wc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx, run)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// TestTaskStreamsShareTheTasks: with three task streams, tasks without a
// key go to each in turn and the workers run those of every stream; a
// keyed task whose stream has no leader (here: it is gone) goes to
// another stream at once and its run shows delivery 2, while a keyed task
// dispatched to its own stream shows delivery 1.
func TestTaskStreamsShareTheTasks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := Config{Prefix: "multi", Streams: 3, AckWait: 5 * time.Second}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d := &deliveries{seen: map[int64][]int{}}
	inProcessWorker(t, f, c.cfg, d)
	var ids []int64
	for range 6 {
		ids = append(ids, dispatch(t, c, "/task/plain", `[]`))
	}
	o.wait(t, 20*time.Second, ids...)
	for i := range 3 {
		name, _ := c.n.taskStream(i)
		st, err := f.conn.JS.Stream(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if last := st.CachedInfo().State.LastSeq; last != 2 {
			t.Errorf("stream %s took %d tasks, want 2", name, last)
		}
	}
	keyHome := func(home int) string {
		for i := 0; ; i++ {
			if k := fmt.Sprint("k", i); c.home(Task{Key: k}) == home {
				return k
			}
		}
	}
	gone, _ := c.n.taskStream(1)
	if err := f.conn.JS.DeleteStream(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	away, err := c.Dispatch(ctx, Task{Handler: "/task/keyed", Key: keyHome(1)})
	if err != nil {
		t.Fatalf("keyed task whose stream is gone: %v", err)
	}
	home, err := c.Dispatch(ctx, Task{Handler: "/task/keyed", Key: keyHome(2)})
	if err != nil {
		t.Fatal(err)
	}
	o.wait(t, 20*time.Second, away, home)
	if got := d.of(away); len(got) != 1 || got[0] != 2 {
		t.Errorf("keyed task sent away from its stream ran with deliveries %v, want [2]", got)
	}
	if got := d.of(home); len(got) != 1 || got[0] != 1 {
		t.Errorf("keyed task in its own stream ran with deliveries %v, want [1]", got)
	}
}

// TestLeftoverTaskStreamIsDrained: tasks queued on three task streams are
// all run by workers configured for one: a stream left over is read, not
// forgotten.
func TestLeftoverTaskStreamIsDrained(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := Config{Prefix: "shrink", Streams: 3}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ids []int64
	for range 6 {
		ids = append(ids, dispatch(t, c, "/task/plain", `[]`))
	}
	d := &deliveries{seen: map[int64][]int{}}
	cfg.Streams = 1
	inProcessWorker(t, f, cfg, d)
	o.wait(t, 20*time.Second, ids...)
	testutil.WaitFor(t, 5*time.Second, "every task to run once", func() bool {
		for _, id := range ids {
			if len(d.of(id)) != 1 {
				return false
			}
		}
		return true
	})
}

// TestWorkerPullsEveryStreamAtOnce: a worker with slots to spare waits on
// every task stream at once, so that a task sent to any of them is taken
// at once (a worker that pulled the streams in turn waited on one at a
// time, and a task on another stayed queued until that pull ended).
func TestWorkerPullsEveryStreamAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := Config{Prefix: "atonce", Streams: 3, AckWait: 5 * time.Second}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := NewWorker(context.Background(), f.conn.JS, WorkerConfig{Config: c.cfg, PollWait: 5 * time.Second, Concurrency: 6})
	if err != nil {
		t.Fatal(err)
	}
	d := &deliveries{seen: map[int64][]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx, d.run)
	}()
	defer func() {
		cancel()
		<-done
	}()
	deadline := time.Now().Add(15 * time.Second)
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for range poll.C {
		waiting := 0
		for i := range w.cons {
			info, err := w.cons[i].Info(context.Background())
			if err == nil && info.NumWaiting > 0 {
				waiting++
			}
		}
		if waiting == len(w.cons) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker waits on %d of its %d task streams at once, want all", waiting, len(w.cons))
		}
	}
}
