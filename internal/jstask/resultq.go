package jstask

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// resultQueue publishes the results of tasks that succeeded
// asynchronously: a task's goroutine publishes its result and returns,
// freeing its slot, and the queue acknowledges the task once the server
// has stored the result (in the order of the publishes, one goroutine for
// all). A result that is not stored within 5s, or refused, takes the
// synchronous path (Worker.record), which retries and leaves the task
// unacknowledged when it cannot store it. The acknowledgement is a plain
// one: if it is lost (the connection dropped), the task is delivered
// again, finds its result stored and is acknowledged without running.
type resultQueue struct {
	w       *Worker
	mu      sync.RWMutex // held for writing to stop
	stopped bool
	ch      chan pendingResult
	wait    time.Duration // confirmWait; shorter in tests
	stop    chan struct{}
	done    chan struct{}
	gather  chan pendingResult // with Config.ResultBatch: the results to gather (batchq.go)
}

// pendingLen bounds the results published and not yet confirmed, per
// worker; a task's goroutine waits for room.
const pendingLen = 1024

// confirmWait is how long the server has to confirm a result, counted
// from its publish: the results published together wait for it together,
// so that confirmations lost all at once (the connection or the stream's
// leader was lost) cost it once, not once per result while the queue
// fills and the tasks' goroutines wait for room.
const confirmWait = 5 * time.Second

// pendingResult is a result published and awaiting its confirmation.
type pendingResult struct {
	f      jetstream.PubAckFuture
	by     time.Time // when the confirmation is due (confirmWait after the publish)
	m      jetstream.Msg
	t      Task
	result json.RawMessage
	n      int
}

// startResults starts the worker's result queue.
func (w *Worker) startResults() *resultQueue {
	q := &resultQueue{w: w, ch: make(chan pendingResult, pendingLen), wait: confirmWait, stop: make(chan struct{}), done: make(chan struct{})}
	if w.cfg.ResultBatch > 1 {
		q.gather = make(chan pendingResult, pendingLen)
		go q.batches()
		return q
	}
	go q.confirm()
	return q
}

// record publishes the result of t and queues the acknowledgement of m
// for when it is stored; it records synchronously when the publish
// cannot start or the queue is stopped.
func (q *resultQueue) record(m jetstream.Msg, t Task, result json.RawMessage, n int) {
	w := q.w
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.stopped || t.Instance == "" || (len(result) > 0 && !json.Valid(result)) { // stopped, or not a JSON result
		w.record(m, t, result, nil, n)
		return
	}
	if q.gather != nil {
		q.gather <- pendingResult{m: m, t: t, result: result, n: n}
		return
	}
	msg := resultFor(w.n, m, t, result, nil, n)
	f, err := w.js.PublishMsgAsync(msg, jetstream.WithExpectStream(resultStreamOf(w.n, t))) // no message id: see Worker.record
	if err != nil {
		w.record(m, t, result, nil, n)
		return
	}
	q.ch <- pendingResult{f: f, by: time.Now().Add(q.wait), m: m, t: t, result: result, n: n}
}

// close stops the queue, once the results queued are confirmed (or
// recorded synchronously), and sends the acknowledgements out.
func (q *resultQueue) close() {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
	close(q.stop)
	<-q.done
	if err := q.w.js.Conn().FlushTimeout(5 * time.Second); err != nil {
		q.w.cfg.Logger.Debug("zealgo: jstask: send acknowledgements", "err", err)
	}
}

// confirm acknowledges each task whose result the server stored, until
// the queue is stopped and empty; a result refused or not confirmed in
// time is recorded again synchronously, on a goroutine of its own.
func (q *resultQueue) confirm() {
	defer close(q.done)
	var again sync.WaitGroup
	defer again.Wait()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		var p pendingResult
		select {
		case p = <-q.ch:
		case <-q.stop:
			select {
			case p = <-q.ch:
			default:
				return
			}
		}
		if confirmedBy(p.f, t, p.by) {
			q.ackStored(p)
			continue
		}
		again.Add(1)
		go func() {
			defer again.Done()
			q.w.record(p.m, p.t, p.result, nil, p.n)
		}()
	}
}

// ackStored acknowledges the task of a result the server stored.
func (q *resultQueue) ackStored(p pendingResult) {
	if err := p.m.Ack(); err != nil {
		q.w.cfg.Logger.Debug("zealgo: jstask: acknowledge task", "id", p.t.ID, "err", err)
	}
}

// confirmedBy reports whether the server confirmed the publish f by the
// time by, waiting for it on t. A confirmation read after it was due
// counts (a backlog, not a loss): it is looked at before the time is.
func confirmedBy(f jetstream.PubAckFuture, t *time.Timer, by time.Time) bool {
	t.Reset(time.Until(by))
	select {
	case <-f.Ok():
		return true
	case <-f.Err():
		return false
	case <-t.C:
		select {
		case <-f.Ok():
			return true
		default:
			return false
		}
	}
}
