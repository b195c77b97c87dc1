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
// tasks that may have been delivered then: in each task stream, the
// tasks after the last delivery the server remembers, as many as its
// workers' consumer may have delivered and not acknowledged at once (its
// share of MaxInFlight). A worker counts a
// first delivery of one of them as a second (Delivery 2: it may have run
// before), and acknowledges it without running when its result is
// stored. A task of the range that had not been delivered is reported as
// a second delivery too: visible, never invisible.

// maybePrefix names the keys of the ranges in the runs bucket:
// "maybe.<task stream>.<first stream sequence>" holding the last. A key
// without the stream ("maybe.<first>", recorded before there were
// several task streams) is a range of the first task stream.
const maybePrefix = "maybe."

// MarkCrash records, in the runs bucket, the tasks that the crashed
// server may have delivered without remembering it, in every task
// stream there is (cfg.Streams and any further ones: those of an
// instance configured with more). It does nothing for a stream, or a
// workers' consumer, that does not exist yet.
func MarkCrash(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	n := cfg.names()
	streams, err := workerStreams(ctx, js, cfg)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("zealgo: jstask: after a crash: %w", err)
	}
	var kv jetstream.KeyValue
	for _, stream := range streams {
		from, to, err := maybeDelivered(ctx, js, cfg, stream)
		if err != nil {
			return err
		}
		if to < from {
			continue
		}
		if kv == nil {
			if kv, err = js.KeyValue(ctx, n.runs); err != nil {
				return fmt.Errorf("zealgo: jstask: after a crash: bucket %s: %w", n.runs, err)
			}
		}
		key := maybePrefix + stream + "." + strconv.FormatUint(from, 10)
		if _, err := kv.Put(ctx, key, []byte(strconv.FormatUint(to, 10))); err != nil {
			return fmt.Errorf("zealgo: jstask: after a crash: bucket %s: %w", n.runs, err)
		}
		cfg.Logger.Warn("zealgo: jstask: the NATS server had crashed; tasks it may have delivered just before are reported as delivered again",
			"stream", stream, "from", from, "to", to)
	}
	return nil
}

// maybeDelivered returns the stream sequences of stream that the crashed
// server may have delivered without remembering it: the share of
// MaxInFlight of one stream after the last delivery its workers'
// consumer remembers. None (to < from) when the stream or the consumer
// does not exist.
func maybeDelivered(ctx context.Context, js jetstream.JetStream, cfg Config, stream string) (from, to uint64, err error) {
	n := cfg.names()
	cons, err := js.Consumer(ctx, stream, n.workers)
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound) {
		return 1, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("zealgo: jstask: after a crash: consumer %s of %s: %w", n.workers, stream, err)
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, 0, fmt.Errorf("zealgo: jstask: after a crash: stream %s: %w", stream, err)
	}
	// The consumer's own bound on tasks delivered and not acknowledged
	// (its share of MaxInFlight, ensureWorkers), else the whole of it.
	inFlight := cons.CachedInfo().Config.MaxAckPending
	if inFlight <= 0 {
		inFlight = cfg.MaxInFlight
	}
	from = cons.CachedInfo().Delivered.Stream + 1
	return from, min(st.CachedInfo().State.LastSeq, from+uint64(inFlight)-1), nil
}

// maybeRanges are the ranges of stream sequences MarkCrash recorded, by
// task stream, kept up to date by a watch of the runs bucket.
type maybeRanges struct {
	mu     sync.RWMutex
	ranges map[string]map[uint64]uint64 // stream ("": the first, from a key without one) → first → last
	stop   func()
}

// watchMaybe starts watching the ranges MarkCrash records, and returns
// once the recorded ones are known (or after 5s).
func watchMaybe(ctx context.Context, kv jetstream.KeyValue) *maybeRanges {
	r := &maybeRanges{ranges: map[string]map[uint64]uint64{}, stop: func() {}}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w, err := kv.Watch(wctx, maybePrefix+">")
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
	rest := strings.TrimPrefix(e.Key(), maybePrefix)
	stream, seq := "", rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		stream, seq = rest[:i], rest[i+1:]
	}
	from, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	to, err := strconv.ParseUint(string(e.Value()), 10, 64)
	if e.Operation() != jetstream.KeyValuePut || err != nil {
		delete(r.ranges[stream], from)
		return
	}
	if r.ranges[stream] == nil {
		r.ranges[stream] = map[uint64]uint64{}
	}
	r.ranges[stream][from] = to
}

// has reports whether the sequence seq of stream is in a range.
func (r *maybeRanges) has(stream string, seq uint64) bool {
	if r == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	in := func(ranges map[uint64]uint64) bool {
		for from, to := range ranges {
			if from <= seq && seq <= to {
				return true
			}
		}
		return false
	}
	// The first task stream is the one named <PREFIX>_TASKS, without a
	// number (names.taskStream).
	return in(r.ranges[stream]) || strings.HasSuffix(stream, "_TASKS") && in(r.ranges[""])
}
