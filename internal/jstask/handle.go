package jstask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// handle runs one delivered task and records its end. The message is
// acknowledged only once the result is stored; a worker that dies before
// leaves it to be delivered again. A failure with attempts left goes back
// to the queue after its backoff; a task given up goes to the dead
// letters too.
func (w *Worker) handle(ctx context.Context, m jetstream.Msg, run Runner) {
	meta, err := m.Metadata()
	if err != nil {
		w.cfg.Logger.Warn("zealgo: jstask: task without metadata", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	n := int(meta.NumDelivered)
	if n == 1 && w.maybe.has(meta.Stream, meta.Sequence.Stream) {
		n = 2 // a crashed server may have delivered it before (crash.go)
	}
	t, err := decodeTask(m)
	if err != nil {
		w.giveUp(m, t, &TaskError{Kind: KindBadTask, Msg: err.Error()}, n)
		return
	}
	p := w.policy(t)
	switch {
	case n > 10*max(w.cfg.MaxDeliver, p.attempts)+100: // a bound of last resort; handleAlone counts runs
		msg := fmt.Sprintf("given up after %d deliveries: its workers died or stalled", n-1)
		w.giveUp(m, t, &TaskError{Kind: KindDeliveries, Msg: msg}, n-1)
		return
	case mayHaveRun(m, n) && w.recorded(t):
		w.ack(m) // an earlier run (or copy) stored its result but was not acknowledged
		return
	}
	w.track(m)
	defer w.untrack(m)
	stop := w.renew.keepAlive(m, p.timeout)
	shown := n
	if maybeRan(m) {
		shown++ // a copy of a dispatch that may be queued twice: a second run is never shown as a first
	}
	result, err, overran := w.runTask(ctx, t, shown, run, p.timeout)
	stop()
	switch {
	case err != nil && ctx.Err() != nil && !overran:
		_ = m.Nak() // cut short by the shutdown: to another worker
	case err != nil && n < p.attempts && retryable(err):
		w.cfg.Logger.Info("zealgo: jstask: task failed; it runs again", "id", t.ID, "task", t.Handler, "attempt", n, "err", err)
		w.markRetry(t.ID, n)
		_ = m.NakWithDelay(min(p.backoff<<min(n-1, 6), time.Hour))
	case err != nil:
		w.markKey(t) // keys.go
		w.giveUp(m, t, err, n)
	case w.resq != nil:
		w.markKey(t)
		w.resq.record(m, t, result, n)
	default:
		w.markKey(t)
		w.record(m, t, result, nil, n)
	}
	if overran {
		w.recycle(m)
	}
}

// handleAlone handles a task delivered again, which runs alone in its
// worker: its runs alone are counted (a task that killed its worker or
// stalled was delivered again), and one beyond MaxDeliver (or its
// attempts) is given up. A task that killed its worker along with others
// costs them no run: the others' deliveries are not counted.
func (w *Worker) handleAlone(ctx context.Context, m jetstream.Msg, run Runner) {
	t, err := decodeTask(m)
	if err != nil {
		w.handle(ctx, m, run)
		return
	}
	key := strconv.FormatInt(t.ID, 10)
	count := 0
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if e, err := w.runs.Get(gctx, key); err == nil {
		count, _ = strconv.Atoi(string(e.Value()))
	}
	if count >= max(w.cfg.MaxDeliver-1, w.policy(t).attempts) && !w.recorded(t) {
		// The runs that did not finish: the first, and those alone.
		msg := fmt.Sprintf("given up after %d deliveries: its workers died or stalled", count+1)
		w.giveUp(m, t, &TaskError{Kind: KindDeliveries, Msg: msg}, count+1)
		return
	}
	if _, err := w.runs.Put(gctx, key, []byte(strconv.Itoa(count+1))); err != nil {
		w.cfg.Logger.Debug("zealgo: jstask: count a run alone", "id", t.ID, "err", err)
	}
	w.handle(ctx, m, run)
}

// maybeRan reports whether m is marked as maybe queued twice
// (hdrMaybeRan, dispatch.go).
func maybeRan(m jetstream.Msg) bool { return m.Headers().Get(hdrMaybeRan) != "" }

// policy is how one task runs: its attempts, backoff and time limit.
type policy struct {
	attempts         int
	backoff, timeout time.Duration
}

// policy returns t's own settings, else its handler's
// (WorkerConfig.Limits), else the worker's.
func (w *Worker) policy(t Task) policy {
	p := policy{attempts: w.cfg.Attempts, backoff: w.cfg.Backoff, timeout: w.cfg.Timeout}
	if p.timeout <= 0 {
		p.timeout = w.cfg.MaxRunTime
	}
	if w.cfg.Limits != nil {
		p.over(w.cfg.Limits(t.Handler))
	}
	p.over(Limits{Attempts: t.Attempts, Backoff: t.Backoff, Timeout: t.Timeout})
	return p
}

// over sets the fields of l that are set.
func (p *policy) over(l Limits) {
	if l.Attempts > 0 {
		p.attempts = l.Attempts
	}
	if l.Backoff > 0 {
		p.backoff = l.Backoff
	}
	if l.Timeout > 0 {
		p.timeout = l.Timeout
	}
}

// retryable reports whether a failure may go away on another run: an
// error, a panic or a time limit, not arguments or a file that do not fit.
func retryable(err error) bool {
	var te *TaskError
	if !errors.As(err, &te) {
		return true
	}
	switch te.Kind {
	case "", KindError, KindPanic, KindTimeout:
		return true
	}
	return false
}

// recycle gives the other running tasks back to the queue and ends the
// worker (WorkerConfig.Recycle), once.
func (w *Worker) recycle(keep jetstream.Msg) {
	w.recycled.Do(func() {
		w.mu.Lock()
		for m := range w.inflight {
			if m != keep {
				_ = m.Nak()
			}
		}
		w.mu.Unlock()
		w.cfg.Logger.Warn("zealgo: jstask: a task ran past its time limit; the worker is recycled")
		w.cfg.Recycle()
	})
}

// runTask calls the runner, turning a panic into a TaskError, within the
// time limit: past it the task's context is cancelled, and a task that
// has not returned a second later is left running (overran) and reported
// as KindTimeout.
func (w *Worker) runTask(ctx context.Context, t Task, n int, run Runner, limit time.Duration) (json.RawMessage, error, bool) {
	if limit <= 0 {
		res, err := call(ctx, t, n, run)
		return res, err, false
	}
	tctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type answer struct {
		res json.RawMessage
		err error
	}
	done := make(chan answer, 1)
	w.gos.run(func() {
		res, err := call(tctx, t, n, run)
		done <- answer{res, err}
	})
	timeout := &TaskError{Kind: KindTimeout, Msg: fmt.Sprintf("the task ran past its time limit of %v", limit)}
	select {
	case a := <-done:
		if a.err != nil && errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, timeout, false
		}
		return a.res, a.err, false
	case <-time.After(limit + time.Second):
		return nil, timeout, true
	}
}

// call calls the runner, turning a panic into a TaskError.
func call(ctx context.Context, t Task, n int, run Runner) (res json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &TaskError{Kind: KindPanic, Msg: fmt.Sprint(p)}
		}
	}()
	return run(ctx, t, n)
}

// giveUp puts the task into the dead letters, with its failure, then
// records the failure for its dispatcher and acknowledges it.
func (w *Worker) giveUp(m jetstream.Msg, t Task, runErr error, n int) {
	if t.Instance != "" {
		w.bury(m, t, runErr, n)
	}
	w.record(m, t, nil, runErr, n)
}

// record stores the end of the task in its dispatcher's results, then
// acknowledges the task. When the result cannot be stored, the task is
// left unacknowledged, to be delivered again.
func (w *Worker) record(m jetstream.Msg, t Task, result json.RawMessage, runErr error, n int) {
	if t.Instance == "" {
		w.cfg.Logger.Warn("zealgo: jstask: task without a dispatching instance dropped", "id", t.ID, "err", runErr)
		_ = m.Term()
		return
	}
	msg := resultFor(w.n, m, t, result, runErr, n)
	deadline := time.Now().Add(2*w.cfg.AckWait + 10*time.Second)
	for pause := 50 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		// No message id: the results stream keeps one message per
		// subject (one per task) and refuses a second one, which a
		// de-duplication id would only repeat at a cost per result.
		_, err := w.js.PublishMsg(ctx, msg, jetstream.WithExpectStream(resultStreamOf(w.n, t)))
		cancel()
		switch {
		case err == nil:
			w.ack(m)
			return
		case errors.Is(err, nats.ErrMaxPayload):
			msg = resultFor(w.n, m, t, nil, &TaskError{Kind: KindResult,
				Msg: fmt.Sprintf("the result of %d bytes is over the server's bound", len(result))}, n)
			continue
		case w.recorded(t):
			w.ack(m) // the task ran twice; the first result stays
			return
		case time.Now().After(deadline):
			w.cfg.Logger.Warn("zealgo: jstask: result not stored; the task will be delivered again", "id", t.ID, "err", err)
			return
		}
		time.Sleep(pause)
	}
}

// recorded reports whether the task's result is already stored, alone
// or in a batch (batch.go).
func (w *Worker) recorded(t Task) bool {
	if w.stored(t.Results, resultSubject(w.n, t)) {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	in, err := w.batched.has(ctx, t)
	if err != nil {
		w.cfg.Logger.Debug("zealgo: jstask: look for a batched result", "id", t.ID, "err", err)
	}
	return in
}

// ack acknowledges m and waits for the server to confirm.
func (w *Worker) ack(m jetstream.Msg) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.DoubleAck(ctx); err != nil {
		w.cfg.Logger.Warn("zealgo: jstask: acknowledge task", "subject", m.Subject(), "err", err)
	}
}

// decodeTask reads a task message. When the body cannot be decoded, the
// returned task still holds the id and instance from the headers, so that
// the failure can be reported.
func decodeTask(m jetstream.Msg) (Task, error) {
	var t Task
	err := json.Unmarshal(m.Data(), &t)
	if err != nil || t.Instance == "" || t.Handler == "" {
		h := m.Headers()
		t.ID, _ = strconv.ParseInt(h.Get(hdrID), 10, 64)
		t.Instance, t.Handler = h.Get(hdrInstance), h.Get(hdrHandler)
		if err == nil {
			err = errors.New("the task names no handler or no instance")
		}
		return t, fmt.Errorf("zealgo: jstask: undecodable task: %w", err)
	}
	return t, nil
}

// resultSubject is where the result of t goes: its results stream's
// subject of its instance and id.
func resultSubject(n names, t Task) string {
	_, pref := n.resultStream(max(t.Results, 0))
	return pref + t.Instance + "." + strconv.FormatInt(t.ID, 10)
}

// resultStreamOf is the results stream of t.
func resultStreamOf(n names, t Task) string {
	name, _ := n.resultStream(max(t.Results, 0))
	return name
}

// failure is the body of a result message for a failed task.
type failure struct {
	Kind string `json:"kind"`
	Msg  string `json:"msg"`
}

// resultMsg builds the result message: the result as body, or the
// failure, marked by a header, as a JSON body.
func resultMsg(n names, t Task, result json.RawMessage, runErr error, deliveries int) *nats.Msg {
	msg := nats.NewMsg(resultSubject(n, t))
	msg.Header.Set(hdrID, strconv.FormatInt(t.ID, 10))
	msg.Header.Set(hdrHandler, t.Handler)
	msg.Header.Set(hdrDeliveries, strconv.Itoa(deliveries))
	if runErr == nil && !json.Valid(result) {
		if len(result) == 0 {
			result = json.RawMessage("null")
		} else {
			runErr = &TaskError{Kind: KindResult, Msg: "the result is not valid JSON"}
		}
	}
	if runErr == nil {
		msg.Data = result
		return msg
	}
	var te *TaskError
	if !errors.As(runErr, &te) {
		te = &TaskError{Kind: KindError, Msg: runErr.Error()}
	}
	kind := te.Kind
	if kind == "" {
		kind = KindError
	}
	msg.Header.Set(hdrKind, kind)
	msg.Data, _ = json.Marshal(failure{Kind: kind, Msg: te.Msg})
	return msg
}
