package taskpool

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPoolReadyAndQueued: a started pool is ready; a task dispatched while
// its only serial worker is busy waits in the queue; once the pool shuts
// down it is no longer ready. An engine that never started is not ready.
func TestPoolReadyAndQueued(t *testing.T) {
	var idle Engine
	if err := idle.Ready(context.Background()); !errors.Is(err, ErrNotStarted) || idle.Queued() != 0 {
		t.Fatalf("an engine not started: Ready %v, Queued %d", err, idle.Queued())
	}
	te := startEngine(t, 1, false)
	if err := te.Ready(context.Background()); err != nil {
		t.Fatalf("a started pool: Ready %v", err)
	}
	busy := te.dispatch(t, "sleep", nil, 300)
	queued := te.dispatch(t, "echo", nil)
	if n := te.Queued(); n != 1 {
		t.Errorf("Queued %d while the serial worker runs a task, want 1", n)
	}
	te.out.wait(t, busy)
	te.out.wait(t, queued)
	if n := te.Queued(); n != 0 {
		t.Errorf("Queued %d once every task finished", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	te.Stop(ctx)
	if err := te.Ready(context.Background()); !errors.Is(err, ErrStopped) {
		t.Errorf("a stopped pool: Ready %v, want ErrStopped", err)
	}
}

// TestDispatchObserved: the observer sees the job with its id before the
// backend does (the fake backend finishes it within Dispatch), adds to its
// Meta, and learns the backend's answer; the Meta reaches the backend.
func TestDispatchObserved(t *testing.T) {
	var e Engine
	fb := &fakeBackend{}
	var gotMeta map[string]string
	finished := make(chan Outcome, 1)
	if err := e.Start(metaBackend{fb, &gotMeta}, func(o Outcome) { finished <- o }, nil); err != nil {
		t.Fatal(err)
	}
	var seenID int64
	var answer error = errors.New("not called")
	id, err := e.DispatchObserved(context.Background(), "/task/x", []byte(`[]`), nil, func(job *Job) func(error) {
		seenID = job.ID
		job.Meta = map[string]string{"traceparent": "00-abc"}
		return func(err error) { answer = err }
	})
	if err != nil || id == 0 || seenID != id || answer != nil {
		t.Fatalf("DispatchObserved: id %d, %v; observer saw id %d and answer %v", id, err, seenID, answer)
	}
	if gotMeta["traceparent"] != "00-abc" {
		t.Errorf("the backend got Meta %v", gotMeta)
	}
	if o := <-finished; o.ID != id {
		t.Errorf("finished %+v", o)
	}
}

// metaBackend records the Meta of the job it is given.
type metaBackend struct {
	*fakeBackend
	meta *map[string]string
}

func (m metaBackend) Dispatch(ctx context.Context, j Job) error {
	*m.meta = j.Meta
	return m.fakeBackend.Dispatch(ctx, j)
}
