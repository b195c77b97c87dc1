package jstask

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zealgo/zealgo/internal/testutil"
)

// lostJS is a JetStream whose asynchronous publishes are never confirmed
// (their confirmations were lost with the connection or the stream's
// leader) and whose synchronous publishes succeed; it counts the latter.
type lostJS struct {
	jetstream.JetStream
	stored atomic.Int64
}

func (j *lostJS) PublishMsgAsync(*nats.Msg, ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	return lostFuture{}, nil
}

func (j *lostJS) PublishMsg(context.Context, *nats.Msg, ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	j.stored.Add(1)
	return &jetstream.PubAck{}, nil
}

// lostFuture is a publish whose confirmation never comes.
type lostFuture struct{}

func (lostFuture) Ok() <-chan *jetstream.PubAck { return nil }
func (lostFuture) Err() <-chan error            { return nil }
func (lostFuture) Msg() *nats.Msg               { return nil }

// taskMsg is a delivered task that counts its acknowledgements.
type taskMsg struct {
	jetstream.Msg
	header nats.Header
	acked  *atomic.Int64
}

func (m taskMsg) Headers() nats.Header                      { return m.header }
func (m taskMsg) Ack() error                                { m.acked.Add(1); return nil }
func (m taskMsg) DoubleAck(context.Context) error           { m.acked.Add(1); return nil }
func (m taskMsg) Metadata() (*jetstream.MsgMetadata, error) { return &jetstream.MsgMetadata{}, nil }

// recordResults starts the result queue of a worker on js (ResultBatch
// batch) whose confirmations are due after wait, and hands it the results
// of n tasks; it returns the queue and the count of the tasks'
// acknowledgements. Without the batch header each result goes alone, as
// results of a dispatch by an earlier version do.
func recordResults(js jetstream.JetStream, batch int, wait time.Duration, n int) (*resultQueue, *atomic.Int64) {
	cfg := Config{AckWait: time.Second, ResultBatch: batch, Logger: slog.New(slog.DiscardHandler)}
	w := &Worker{js: js, cfg: WorkerConfig{Config: cfg}, n: cfg.names()}
	q := w.startResults()
	q.wait = wait // read by the queue's goroutine only after a result came
	acked := &atomic.Int64{}
	for i := range n {
		q.record(taskMsg{header: nats.Header{}, acked: acked}, Task{ID: int64(i + 1), Instance: "a", Handler: "/task/x"}, []byte(`1`), 1)
	}
	return q, acked
}

// halt stops the queue's goroutine (close would flush a connection the
// tests' JetStream has not).
func (q *resultQueue) halt() {
	close(q.stop)
	<-q.done
}

// TestLostConfirmationsCostOneWait: results whose confirmations never
// come are stored again synchronously and their tasks acknowledged after
// one wait for the whole lot, not one wait per result (100 results, a
// wait of 300ms: 30s before, while the queue filled and the tasks'
// goroutines waited for room), alone and batched.
func TestLostConfirmationsCostOneWait(t *testing.T) {
	for _, batch := range []int{0, 10} {
		t.Run("batch "+strconv.Itoa(batch), func(t *testing.T) {
			js := &lostJS{}
			const n = 100
			q, acked := recordResults(js, batch, 300*time.Millisecond, n)
			if !testutil.Poll(10*time.Second, func() bool { return acked.Load() == n }) {
				t.Fatalf("%d of %d tasks acknowledged after 10s (%d results stored again)", acked.Load(), n, js.stored.Load())
			}
			if js.stored.Load() != n {
				t.Errorf("%d results stored again, want %d", js.stored.Load(), n)
			}
			q.halt()
		})
	}
}

// confirmedJS is a JetStream whose asynchronous publishes are confirmed
// at once; it counts the synchronous ones.
type confirmedJS struct{ lostJS }

func (j *confirmedJS) PublishMsgAsync(*nats.Msg, ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	ok := make(chan *jetstream.PubAck, 1)
	ok <- &jetstream.PubAck{}
	return confirmedFuture{ok}, nil
}

// confirmedFuture is a publish the server confirmed.
type confirmedFuture struct{ ok chan *jetstream.PubAck }

func (f confirmedFuture) Ok() <-chan *jetstream.PubAck { return f.ok }
func (confirmedFuture) Err() <-chan error              { return nil }
func (confirmedFuture) Msg() *nats.Msg                 { return nil }

// TestDueConfirmationsAreNotStoredAgain: a backlog of results whose
// confirmations came but are read after they were due (a wait of 0) is
// acknowledged, none stored again: a confirmation is looked at before the
// time is.
func TestDueConfirmationsAreNotStoredAgain(t *testing.T) {
	for _, batch := range []int{0, 10} {
		t.Run("batch "+strconv.Itoa(batch), func(t *testing.T) {
			js := &confirmedJS{}
			const n = 200
			q, acked := recordResults(js, batch, 0, n)
			testutil.WaitFor(t, 10*time.Second, "every task acknowledged", func() bool { return acked.Load() == n })
			if got := js.stored.Load(); got != 0 {
				t.Errorf("%d confirmed results stored again", got)
			}
			q.halt()
		})
	}
}
