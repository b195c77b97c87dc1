package jstask

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// batches publishes the gathered results (Config.ResultBatch) until the
// queue is stopped and empty, in rounds: it takes the results that wait,
// publishes them in as few messages as it can (batch.go), waits for the
// server to store them and acknowledges their tasks; the results that
// end meanwhile wait for the next round. A result that ends while
// nothing else waits or is being stored is published alone at once, so
// that batching adds no latency to a task when there is no queue.
func (q *resultQueue) batches() {
	defer close(q.done)
	var again sync.WaitGroup
	defer again.Wait()
	for {
		round, ok := q.round()
		if !ok {
			return
		}
		q.settle(q.publish(round), &again)
	}
}

// round waits for a result to publish and takes the others that wait;
// false once the queue is stopped and empty.
func (q *resultQueue) round() ([]pendingResult, bool) {
	var first pendingResult
	select {
	case first = <-q.gather:
	case <-q.stop:
		select {
		case first = <-q.gather:
		default:
			return nil, false
		}
	}
	round := []pendingResult{first}
	for len(round) < pendingLen {
		select {
		case p := <-q.gather:
			round = append(round, p)
		default:
			return round, true
		}
	}
	return round, true
}

// sentResults is one message of a round: its results, the message and
// the future of its publish (nil: the publish did not start).
type sentResults struct {
	ps    []pendingResult
	bytes int
	msg   *nats.Msg
	f     jetstream.PubAckFuture
}

// publish groups the results of a round into messages, a batch per
// instance and results stream of at most Config.ResultBatch results and
// batchBytes, and publishes them. A result of a task that may have run
// before goes alone on its own subject (resultFor), and so does a long
// one, and one of a task whose message does not say that its instance
// reads batches (hdrBatch: dispatched by an earlier version).
func (q *resultQueue) publish(round []pendingResult) []*sentResults {
	w := q.w
	var out []*sentResults
	open := map[string]*sentResults{} // the batch being filled, by stream and instance
	for _, p := range round {
		if mayHaveRun(p.m, p.n) || len(p.result) > batchBytes/4 || p.m.Headers().Get(hdrBatch) != batchFormat {
			out = append(out, &sentResults{ps: []pendingResult{p}})
			continue
		}
		key := resultStreamOf(w.n, p.t) + " " + p.t.Instance
		s := open[key]
		if s == nil || len(s.ps) >= w.cfg.ResultBatch || s.bytes+len(p.result) > batchBytes {
			s = &sentResults{}
			open[key] = s
			out = append(out, s)
		}
		s.ps = append(s.ps, p)
		s.bytes += len(p.result) + len(p.t.Handler) + 64
	}
	for _, s := range out {
		p := s.ps[0]
		if len(s.ps) == 1 {
			s.msg = resultFor(w.n, p.m, p.t, p.result, nil, p.n)
		} else if msg, err := batchMsg(w.n, s.ps); err == nil {
			s.msg = msg
		} else {
			continue
		}
		// No message id: see Worker.record; a batch's subject is its own.
		s.f, _ = w.js.PublishMsgAsync(s.msg, jetstream.WithExpectStream(resultStreamOf(w.n, p.t)))
	}
	return out
}

// settle acknowledges the tasks of each message the server stored; a
// message refused, not stored within the queue's wait of the round's
// publish (the whole round's: confirmWait) or not sent is stored again
// synchronously, on a goroutine of its own counted in again.
func (q *resultQueue) settle(sent []*sentResults, again *sync.WaitGroup) {
	by := time.Now().Add(q.wait)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for _, s := range sent {
		if s.f != nil && confirmedBy(s.f, t, by) {
			q.ackAll(s.ps)
			continue
		}
		again.Add(1)
		go func() {
			defer again.Done()
			q.w.recordBatch(s)
		}()
	}
}

// ackAll acknowledges the tasks of results the server stored.
func (q *resultQueue) ackAll(ps []pendingResult) {
	for _, p := range ps {
		q.ackStored(p)
	}
}

// recordBatch stores a message of results synchronously, retrying, then
// acknowledges its tasks; a result alone takes Worker.record. A batch
// refused for its subject holding a message was stored by an earlier
// attempt. When it cannot be stored, its tasks are left unacknowledged,
// to be delivered again; one too long for the server goes alone.
func (w *Worker) recordBatch(s *sentResults) {
	if len(s.ps) == 1 || s.msg == nil {
		for _, p := range s.ps {
			w.record(p.m, p.t, p.result, nil, p.n)
		}
		return
	}
	first := s.ps[0].t
	deadline := time.Now().Add(2*w.cfg.AckWait + 10*time.Second)
	for pause := 50 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := w.js.PublishMsg(ctx, s.msg, jetstream.WithExpectStream(resultStreamOf(w.n, first)))
		cancel()
		switch {
		case err == nil || w.stored(first.Results, s.msg.Subject):
			for _, p := range s.ps {
				w.ack(p.m)
			}
			return
		case errors.Is(err, nats.ErrMaxPayload):
			for _, p := range s.ps {
				w.record(p.m, p.t, p.result, nil, p.n)
			}
			return
		case time.Now().After(deadline):
			w.cfg.Logger.Warn("zealgo: jstask: results not stored; their tasks will be delivered again", "first", first.ID, "err", err)
			return
		}
		time.Sleep(pause)
	}
}

// stored reports whether results stream i holds a message on subject.
func (w *Worker) stored(i int, subject string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := w.resultsStream(ctx, i)
	if err == nil {
		_, err = st.GetLastMsgForSubject(ctx, subject)
	}
	return err == nil
}
