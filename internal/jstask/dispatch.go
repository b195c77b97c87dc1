package jstask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// downFor is how long a task stream that failed a publish is passed
// over by dispatch before it is tried again (the cluster elects a new
// leader 4 to 9 s after losing one).
const downFor = 2 * time.Second

// Dispatch publishes t, with a new id from NextID when t.ID is 0, and
// returns its id once JetStream has stored it.
//
// Tasks without a key go to the task streams in turn; a task with a Key
// goes to its own stream (a hash of the key), where a second dispatch of
// the same key within Config.DuplicateWindow is dropped: it returns the
// first one's id while that one is queued, else ErrDuplicate. A second
// dispatch of the same id is dropped the same way.
//
// A stream that cannot take the task (no leader: its server was lost)
// is passed over at once for the next one. When a publish may have been
// stored without an acknowledgement (no answer in time), the copy sent
// to another stream is marked (hdrMaybeRan), and so is a keyed task sent
// away from its own stream: the worker shows its first run as a second
// delivery (Delivery 2), so that a task that runs twice is never seen
// as a first run both times. When every stream fails, dispatch retries
// until ctx is done. A full queue (every stream full) is ErrQueueFull.
func (c *Client) Dispatch(ctx context.Context, t Task) (int64, error) {
	if t.Handler == "" || strings.ContainsAny(t.Handler, "\r\n") {
		return 0, fmt.Errorf("zealgo: jstask: task handler %q: want a name on one line", t.Handler)
	}
	if t.ID == 0 {
		id, err := c.NextID(ctx)
		if err != nil {
			return 0, err
		}
		t.ID = id
	}
	t.Instance = c.instance
	t.Dispatched = time.Now().UTC()
	t.Results = int(uint64(t.ID) % uint64(c.cfg.ResultStreams))
	body, err := json.Marshal(t)
	if err != nil {
		return 0, fmt.Errorf("zealgo: jstask: task %s: %w", t.Handler, err)
	}
	if t.Key != "" && c.keyEnded(ctx, t.Key) { // keys.go: a task of the key ended
		return 0, fmt.Errorf("%w: task %s with key %q", ErrDuplicate, t.Handler, t.Key)
	}
	home := c.home(t)
	var unsure []int // the streams an attempt may have reached
	for pause := 20 * time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		full, last := 0, error(nil)
		for _, i := range c.order(home) {
			marked := (t.Key != "" && i != home) || slices.ContainsFunc(unsure, func(u int) bool { return u != i })
			ack, err := c.publishTask(ctx, t, body, i, marked)
			switch {
			case err == nil && ack.Duplicate && t.Key != "":
				name, _ := c.n.taskStream(i)
				return c.original(ctx, name, ack.Sequence, t)
			case err == nil:
				c.down[i].Store(0)
				return t.ID, nil
			case isFull(err):
				full++
				continue
			case !transient(err):
				return 0, fmt.Errorf("zealgo: jstask: dispatch %s (id %d): %w", t.Handler, t.ID, err)
			case ctx.Err() != nil:
				return 0, fmt.Errorf("zealgo: jstask: dispatch %s (id %d): %w", t.Handler, t.ID, err)
			case ambiguous(err) && !slices.Contains(unsure, i):
				unsure = append(unsure, i)
			}
			c.down[i].Store(time.Now().Add(downFor).UnixNano())
			last = err
		}
		if full == c.cfg.Streams {
			return 0, fmt.Errorf("%w (%d tasks wait): task %s not dispatched; add workers or raise the bound", ErrQueueFull, c.cfg.MaxQueued, t.Handler)
		}
		if err := c.lost(ctx, last); err != nil {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("zealgo: jstask: dispatch %s (id %d): %w", t.Handler, t.ID, last)
		case <-time.After(pause):
		}
	}
}

// publishTask publishes the task once to task stream i, marked as maybe
// queued twice when marked, and waits up to publishAttempt for the
// acknowledgement. Its de-duplication id is its key, else its id.
func (c *Client) publishTask(ctx context.Context, t Task, body []byte, i int, marked bool) (*jetstream.PubAck, error) {
	name, subj := c.n.taskStream(i)
	id := strconv.FormatInt(t.ID, 10)
	msg := nats.NewMsg(subj)
	msg.Data = body
	msg.Header.Set(hdrID, id)
	msg.Header.Set(hdrInstance, c.instance)
	msg.Header.Set(hdrHandler, t.Handler)
	msg.Header.Set(hdrBatch, batchFormat) // this instance reads batches of results of this format
	if marked {
		msg.Header.Set(hdrMaybeRan, "1")
	}
	msgID := id
	if t.Key != "" {
		msgID = "key:" + t.Key
	}
	// No retry on no responders: another stream is tried at once.
	return publishAsync(ctx, c.js, msg, publishAttempt, c.drops.now(), jetstream.WithMsgID(msgID),
		jetstream.WithExpectStream(name), jetstream.WithRetryAttempts(0))
}

// home is the task stream t goes to first: its key's, else the next in
// turn.
func (c *Client) home(t Task) int {
	if c.cfg.Streams <= 1 {
		return 0
	}
	if t.Key != "" {
		h := fnv.New32a()
		_, _ = h.Write([]byte(t.Key))
		return int(h.Sum32() % uint32(c.cfg.Streams))
	}
	return int(c.turn.Add(1) % uint64(c.cfg.Streams))
}

// order is the task streams to try, from home on: those that did not
// fail lately first, then the others.
func (c *Client) order(home int) []int {
	now := time.Now().UnixNano()
	up := make([]int, 0, c.cfg.Streams)
	var down []int
	for j := range c.cfg.Streams {
		i := (home + j) % c.cfg.Streams
		if c.down[i].Load() > now {
			down = append(down, i)
		} else {
			up = append(up, i)
		}
	}
	return append(up, down...)
}

// lost returns ErrStreamLost when the publishes failed for want of a
// stream (it is gone from the server), checked within publishAttempt.
func (c *Client) lost(ctx context.Context, err error) error {
	if !errors.Is(err, jetstream.ErrNoStreamResponse) {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, publishAttempt)
	defer cancel()
	if lost := checkStreams(cctx, c.js, c.cfg); errors.Is(lost, ErrStreamLost) {
		return lost
	}
	return nil
}

// isFull reports whether a stream refused a task for being full.
func isFull(err error) bool {
	var apiErr *jetstream.APIError
	return err != nil && (strings.Contains(err.Error(), "maximum messages") ||
		errors.As(err, &apiErr) && apiErr.ErrorCode == 10077)
}

// ambiguous reports whether a failed publish may have been stored all
// the same: it was sent, and no answer came in time.
func ambiguous(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrAsyncPublishTimeout) || errors.Is(err, errDropped)
}

// errDropped: the connection dropped while a publish waited for its
// acknowledgement; it may have been stored.
var errDropped = errors.New("zealgo: jstask: the NATS connection dropped before the acknowledgement")

// dropWatch tells the publishes under way that the connection dropped
// (its server was lost), so that they are retried elsewhere at once
// rather than after their time bound.
type dropWatch struct {
	nc     *nats.Conn
	status chan nats.Status
	mu     sync.Mutex
	ch     chan struct{} // closed at the next drop
}

// watchDrops starts watching nc.
func watchDrops(nc *nats.Conn) *dropWatch {
	if nc == nil {
		return nil
	}
	d := &dropWatch{nc: nc, status: nc.StatusChanged(nats.DISCONNECTED, nats.RECONNECTING, nats.CLOSED),
		ch: make(chan struct{})}
	go func() {
		for range d.status {
			d.mu.Lock()
			close(d.ch)
			d.ch = make(chan struct{})
			d.mu.Unlock()
		}
	}()
	return d
}

// now returns a channel closed at the next drop (nil: never).
func (d *dropWatch) now() <-chan struct{} {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch
}

// stop ends the watch.
func (d *dropWatch) stop() {
	if d != nil {
		d.nc.RemoveStatusListener(d.status)
	}
}

// original returns the id of the queued task at seq in stream, which a
// dispatch of t with the same key duplicated, or ErrDuplicate when it is
// gone.
func (c *Client) original(ctx context.Context, stream string, seq uint64, t Task) (int64, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := c.js.Stream(actx, stream)
		var m *jetstream.RawStreamMsg
		if err == nil {
			m, err = st.GetMsg(actx, seq)
		}
		cancel()
		switch {
		case err == nil:
			if id, perr := strconv.ParseInt(m.Header.Get(hdrID), 10, 64); perr == nil {
				return id, nil
			}
			return 0, fmt.Errorf("%w: task %s with key %q", ErrDuplicate, t.Handler, t.Key)
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return 0, fmt.Errorf("%w: task %s with key %q", ErrDuplicate, t.Handler, t.Key)
		case ctx.Err() != nil:
			return 0, fmt.Errorf("zealgo: jstask: dispatch %s with key %q: a first dispatch is recorded but cannot be read: %w", t.Handler, t.Key, err)
		}
	}
}
