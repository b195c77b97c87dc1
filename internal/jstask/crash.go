package jstask

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A NATS server that crashed (killed, or its machine failed) keeps every
// task it acknowledged, but the state of the workers' consumer is written
// about every 100ms and not synced: the deliveries of its last moments
// may be forgotten, and those tasks delivered again as first deliveries,
// a second run that TaskInfo.Delivery would not show. MarkCrash, called
// when such a server starts again before any worker pulls, records the
// tasks that may have been delivered then: the next MaxInFlight tasks
// after the last delivery the server remembers (at most MaxInFlight
// tasks are delivered and not acknowledged at once). A worker counts a
// first delivery of one of them as a second (Delivery 2: it may have run
// before), and acknowledges it without running when its result is
// stored. A task of the range that had not been delivered is reported as
// a second delivery too: visible, never invisible.

// maybePrefix names the keys of the ranges in the runs bucket:
// "maybe.<first stream sequence>" holding the last.
const maybePrefix = "maybe."

// MarkCrash records, in the runs bucket, the tasks that the crashed
// server may have delivered without remembering it. It does nothing when
// the streams do not exist yet.
func MarkCrash(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	n := cfg.names()
	cons, err := js.Consumer(ctx, n.tasks, n.workers)
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("zealgo: jstask: after a crash: consumer %s: %w", n.workers, err)
	}
	st, err := js.Stream(ctx, n.tasks)
	if err != nil {
		return fmt.Errorf("zealgo: jstask: after a crash: stream %s: %w", n.tasks, err)
	}
	from := cons.CachedInfo().Delivered.Stream + 1
	to := min(st.CachedInfo().State.LastSeq, from+uint64(cfg.MaxInFlight)-1)
	if to < from {
		return nil
	}
	kv, err := js.KeyValue(ctx, n.runs)
	if err != nil {
		return fmt.Errorf("zealgo: jstask: after a crash: bucket %s: %w", n.runs, err)
	}
	if _, err := kv.Put(ctx, maybePrefix+strconv.FormatUint(from, 10), []byte(strconv.FormatUint(to, 10))); err != nil {
		return fmt.Errorf("zealgo: jstask: after a crash: bucket %s: %w", n.runs, err)
	}
	cfg.Logger.Warn("zealgo: jstask: the NATS server had crashed; tasks it may have delivered just before are reported as delivered again",
		"from", from, "to", to)
	return nil
}

// maybeRanges are the ranges of stream sequences MarkCrash recorded,
// kept up to date by a watch of the runs bucket.
type maybeRanges struct {
	mu     sync.RWMutex
	ranges map[uint64]uint64 // first → last
	stop   func()
}

// watchMaybe starts watching the ranges MarkCrash records, and returns
// once the recorded ones are known (or after 5s).
func watchMaybe(ctx context.Context, kv jetstream.KeyValue) *maybeRanges {
	r := &maybeRanges{ranges: map[uint64]uint64{}, stop: func() {}}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w, err := kv.Watch(wctx, maybePrefix+"*")
	if err != nil {
		cancel()
		return r
	}
	r.stop = func() { cancel(); _ = w.Stop() }
	ready := make(chan struct{})
	go func() {
		once := sync.OnceFunc(func() { close(ready) })
		defer once()
		for e := range w.Updates() {
			if e == nil { // the recorded ones are all there
				once()
				continue
			}
			r.set(e)
		}
	}()
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
	}
	return r
}

// set records or removes the range of e.
func (r *maybeRanges) set(e jetstream.KeyValueEntry) {
	from, err := strconv.ParseUint(strings.TrimPrefix(e.Key(), maybePrefix), 10, 64)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	to, err := strconv.ParseUint(string(e.Value()), 10, 64)
	if e.Operation() != jetstream.KeyValuePut || err != nil {
		delete(r.ranges, from)
		return
	}
	r.ranges[from] = to
}

// has reports whether the stream sequence seq is in a range.
func (r *maybeRanges) has(seq uint64) bool {
	if r == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for from, to := range r.ranges {
		if from <= seq && seq <= to {
			return true
		}
	}
	return false
}
