package jstask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// FinishFunc receives the end of a task: its id and handler, and its
// JSON-encoded result or a *TaskError.
type FinishFunc func(id int64, handler string, result json.RawMessage, err error)

// Client is the dispatching side: it publishes tasks and hands the
// results of its instance's tasks to a finish callback.
type Client struct {
	js       jetstream.JetStream
	cfg      Config
	n        names
	instance string

	ids   idReserve
	drops *dropWatch               // nil for a client of the dead letters
	down  [maxStreams]atomic.Int64 // per task stream: skipped until then (Unix ns)
	turn  atomic.Uint64            // the task stream of the next task without a key

	finish     FinishFunc
	mu         sync.Mutex // serialises finish calls and seen
	seen       seenSet
	batched    *batchIndex // the batched results, read for a task run again (batch.go)
	cmu        sync.Mutex  // guards consume and closed
	consume    readers     // nil without a finish callback
	closed     bool
	restarting atomic.Bool
}

// Open creates or updates the streams and returns a Client for the
// instance named instance (letters, digits, '_' and '-'; the same name
// after a restart finds the results that came meanwhile). With a non-nil
// finish it starts reading the instance's results: finish is called
// once per task, one call at a time, and the result is acknowledged when
// it returns. A result whose acknowledgement is lost (the process died
// between the call and the acknowledgement) is handed over again after
// a restart.
func Open(ctx context.Context, js jetstream.JetStream, cfg Config, instance string, finish FinishFunc) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if !tokenRE.MatchString(instance) {
		return nil, fmt.Errorf("zealgo: jstask: instance name %q: want 1 to 64 letters, digits, '_' or '-'", instance)
	}
	if err := setupStreams(ctx, js, cfg); err != nil {
		return nil, err
	}
	c := &Client{js: js, cfg: cfg, n: cfg.names(), instance: instance, finish: finish, drops: watchDrops(js.Conn())}
	c.batched = newBatchIndex(js, c.n)
	if finish == nil {
		return c, nil
	}
	cc, err := c.readResults(ctx)
	if err != nil {
		return nil, err
	}
	c.cmu.Lock()
	defer c.cmu.Unlock()
	if c.consume != nil { // restartResults came first
		cc.stop()
		return c, nil
	}
	c.consume = cc
	return c, nil
}

// readers are the readings of an instance's results streams.
type readers []jetstream.ConsumeContext

// stop stops each reading.
func (r readers) stop() {
	for _, cc := range r {
		cc.Stop()
	}
}

// wait waits for each reading to end.
func (r readers) wait() {
	for _, cc := range r {
		<-cc.Closed()
	}
}

// readResults creates or updates the instance's consumer of each results
// stream (readResultStreams) and starts reading them.
func (c *Client) readResults(ctx context.Context) (readers, error) {
	streams, err := readResultStreams(ctx, c.js, c.cfg)
	if err != nil {
		return nil, err
	}
	var out readers
	for _, i := range streams {
		cons, err := ensureResults(ctx, c.js, c.cfg, c.instance, i)
		if err == nil {
			var cc jetstream.ConsumeContext
			// Pulls of up to 256: the results of a burst come in few pulls.
			cc, err = cons.Consume(c.onResult, jetstream.PullMaxMessages(256), jetstream.ConsumeErrHandler(c.consumeErr))
			if err == nil {
				out = append(out, cc)
				continue
			}
			err = fmt.Errorf("zealgo: jstask: results of %s: %w", c.instance, err)
		}
		out.stop()
		return nil, err
	}
	return out, nil
}

// consumeErr restarts the reading of results when the consumer is gone
// (a server that lost its data) or silent.
func (c *Client) consumeErr(_ jetstream.ConsumeContext, err error) {
	c.cfg.Logger.Debug("zealgo: jstask: reading results", "instance", c.instance, "err", err)
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrConsumerNotFound) ||
		errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrNoHeartbeat) {
		if c.restarting.CompareAndSwap(false, true) {
			go c.restartResults()
		}
	}
}

// restartResults sets the results consumer up again, once the streams
// are there (a lost stream is logged with what to do, not created), and
// replaces the reading of results, retrying until it works or the
// client is closed.
func (c *Client) restartResults() {
	defer c.restarting.Store(false)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := checkStreams(ctx, c.js, c.cfg)
		if errors.Is(err, ErrStreamLost) {
			c.cfg.Logger.Error(err.Error(), "instance", c.instance)
		}
		var cc readers
		if err == nil {
			cc, err = c.readResults(ctx)
		}
		cancel()
		c.cmu.Lock()
		if c.closed {
			c.cmu.Unlock()
			cc.stop()
			return
		}
		if err == nil {
			old := c.consume
			c.consume = cc
			c.cmu.Unlock()
			old.stop()
			return
		}
		c.cmu.Unlock()
		c.cfg.Logger.Debug("zealgo: jstask: restart reading results", "instance", c.instance, "err", err)
		time.Sleep(time.Second)
	}
}

// Instance returns the instance's name.
func (c *Client) Instance() string { return c.instance }

// publishAttempt bounds one attempt of a publish. A stream whose leader
// died drops what it is sent until its followers elect another (4 to 9 s
// on nats-server, not configurable): each attempt is lost meanwhile, and
// the first one after the election answers within this bound, not a
// longer one later. A retry carries the same de-duplication id.
// The bound leaves room for nats.go's own retries on no responders
// (2 × 250ms), after which a stream that is gone is reported.
const publishAttempt = time.Second

// publish publishes msg, retrying a transient failure (no answer, no
// stream leader yet) until ctx is done. A stream that is gone is
// ErrStreamLost; it is not created again.
func (c *Client) publish(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	for pause := 20 * time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		ack, err := publishAsync(ctx, c.js, msg, publishAttempt, c.drops.now(), opts...)
		if err == nil || !transient(err) {
			return ack, err
		}
		if errors.Is(err, jetstream.ErrNoStreamResponse) {
			// Bounded: a stream between leaders answers no lookup either,
			// and the wait must not take the rest of ctx.
			cctx, ccancel := context.WithTimeout(ctx, publishAttempt)
			lost := checkStreams(cctx, c.js, c.cfg)
			ccancel()
			if errors.Is(lost, ErrStreamLost) {
				return nil, lost
			}
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(pause):
		}
	}
}

// publishAsync publishes msg without a request of its own (the
// acknowledgements of all publishes under way come back on one
// subscription, so that concurrent callers pipeline) and waits up to wait
// for the server to store it, or until dropped is closed (the connection
// dropped: the acknowledgement will not come), which is errDropped.
func publishAsync(ctx context.Context, js jetstream.JetStream, msg *nats.Msg, wait time.Duration, dropped <-chan struct{},
	opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	f, err := js.PublishMsgAsync(msg, opts...)
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, context.DeadlineExceeded
	case <-dropped:
		return nil, errDropped
	}
}

// errCodeDupInProcess is JetStream's answer to a publish whose message id
// is the id of one still being stored (JSStreamDuplicateMessageConflict).
const errCodeDupInProcess = 10158

// transient reports whether a publish may work when tried again: no
// answer in time, no responders, a stream between leaders, or the same
// key's earlier publish still being stored (once stored, the retry is
// answered as its duplicate).
func transient(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// 503 but 10077: the stream refused to store (a full queue).
		return apiErr.Code == 503 && apiErr.ErrorCode != 10077 ||
			apiErr.ErrorCode == errCodeDupInProcess
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, jetstream.ErrTooManyStalledMsgs) || errors.Is(err, jetstream.ErrAsyncPublishTimeout) ||
		errors.Is(err, errDropped)
}

// Close stops reading results and returns once the finish call under
// way, if any, has returned. It does not close the NATS connection.
func (c *Client) Close() {
	c.cmu.Lock()
	c.closed = true
	cc := c.consume
	c.cmu.Unlock()
	c.drops.stop()
	cc.stop()
	cc.wait()
}

// onResult hands one result, or each of a batch, to the finish callback
// and acknowledges it. A result of a task that may have run before
// (hdrRerun) is handed over only when no result of the task was, in this
// process or in a batch stored since its dispatch.
func (c *Client) onResult(m jetstream.Msg) {
	if m.Headers().Get(hdrBatch) != "" {
		c.onBatch(m)
		return
	}
	c.mu.Lock()
	id, handler, result, ferr := decodeResult(m)
	// A result left to a batch is not marked as handed over: the batch's
	// copy may come later in the stream.
	if !c.seen.has(id) && !c.inBatch(m, id) {
		c.seen.add(id, c.cfg.ResultAckWait)
		c.call(id, handler, result, ferr)
	}
	c.mu.Unlock()
	// A plain ack: one lost (the process died meanwhile) hands the
	// result over again, once, which seen or the restart absorbs.
	if err := m.Ack(); err != nil {
		c.cfg.Logger.Warn("zealgo: jstask: acknowledge result", "subject", m.Subject(), "err", err)
	}
}

// onBatch hands each result of a batch to the finish callback, then
// acknowledges the batch. A batch this version cannot read is logged and
// left for an instance of a newer version (delivered again later).
func (c *Client) onBatch(m jetstream.Msg) {
	entries, err := decodeBatch(m)
	if err != nil {
		c.cfg.Logger.Error(err.Error(), "subject", m.Subject())
		_ = m.NakWithDelay(time.Minute)
		return
	}
	c.mu.Lock()
	for _, e := range entries {
		if !c.seen.add(e.ID, c.cfg.ResultAckWait) {
			c.call(e.ID, e.Handler, e.Result, nil)
		}
	}
	c.mu.Unlock()
	if err := m.Ack(); err != nil {
		c.cfg.Logger.Warn("zealgo: jstask: acknowledge results", "subject", m.Subject(), "err", err)
	}
}

// inBatch reports whether the result m of task id, marked as a task
// that may have run before, was stored in a batch since the task's
// dispatch (then handed over already, or to be).
func (c *Client) inBatch(m jetstream.Msg, id int64) bool {
	at, err := strconv.ParseInt(m.Headers().Get(hdrRerun), 10, 64)
	if err != nil {
		return false
	}
	meta, err := m.Metadata()
	if err != nil {
		return false
	}
	t := Task{ID: id, Instance: c.instance, Dispatched: time.Unix(0, at), Results: c.resultsIndex(meta.Stream)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	in, err := c.batched.has(ctx, t)
	if err != nil {
		c.cfg.Logger.Warn("zealgo: jstask: look for a batched result of a task run again", "id", id, "err", err)
	}
	return in
}

// resultsIndex is the index of results stream name.
func (c *Client) resultsIndex(name string) int {
	for i := range c.cfg.ResultStreams {
		if s, _ := c.n.resultStream(i); s == name {
			return i
		}
	}
	return 0
}

// call runs the finish callback; a panic in it is logged.
func (c *Client) call(id int64, handler string, result json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.cfg.Logger.Error("zealgo: jstask: finish callback panicked", "id", id, "panic", fmt.Sprint(p))
		}
	}()
	c.finish(id, handler, result, err)
}

// decodeResult reads a result message: the task's id and handler in its
// headers, the result in its body, or a failure marked by a header.
func decodeResult(m jetstream.Msg) (int64, string, json.RawMessage, error) {
	h := m.Headers()
	id, _ := strconv.ParseInt(h.Get(hdrID), 10, 64)
	handler := h.Get(hdrHandler)
	if h.Get(hdrKind) == "" {
		return id, handler, json.RawMessage(m.Data()), nil
	}
	f := failure{Kind: h.Get(hdrKind)}
	if err := json.Unmarshal(m.Data(), &f); err != nil {
		f.Msg = "undecodable failure: " + err.Error()
	}
	n, _ := strconv.Atoi(h.Get(hdrDeliveries))
	return id, handler, nil, &TaskError{ID: id, Handler: handler, Kind: f.Kind, Msg: f.Msg, Deliveries: n}
}

// seenSet remembers the ids of the tasks whose results were handed over
// in this process for a while, so that a result redelivered before its
// acknowledgement landed is not handed over twice.
type seenSet struct {
	at    map[int64]time.Time
	added int
}

// has reports whether id is there.
func (s *seenSet) has(id int64) bool {
	_, ok := s.at[id]
	return ok
}

// add records id and reports whether it was already there.
func (s *seenSet) add(seq int64, ackWait time.Duration) bool {
	now := time.Now()
	if s.at == nil {
		s.at = make(map[int64]time.Time)
	}
	if _, ok := s.at[seq]; ok {
		return true
	}
	s.at[seq] = now
	if s.added++; s.added%1024 == 0 {
		keep := 10*ackWait + time.Minute
		for k, t := range s.at {
			if now.Sub(t) > keep {
				delete(s.at, k)
			}
		}
	}
	return false
}
