package jstask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Results batching (Config.ResultBatch): a worker gathers the results of
// first runs that end while its earlier results are being stored into one
// message, on the subject <results prefix><instance>.batch.<first id>,
// marked by hdrBatch with the format's version, its task ids in hdrBatchIDs
// and a JSON array of batchEntry as body. A result of a task that may have
// run before (mayHaveRun) always
// goes alone on the task's own subject, marked by hdrRerun with the time of
// its dispatch: the instance hands it over only when no result of the task
// is stored, its own or in a batch (batchIndex), so that a result is handed
// over once even when its first run's result was batched and the instance
// restarted meanwhile.
const (
	hdrBatch    = "Zealgo-Result-Batch"     // the batch format's version; on a task: the one its instance reads
	hdrBatchIDs = "Zealgo-Result-Batch-Ids" // the task ids, comma-separated
	hdrRerun    = "Zealgo-Task-Rerun"       // the task's dispatch time, Unix ns
	batchFormat = "1"
	// batchBytes bounds the body of a batch; a longer result goes alone.
	batchBytes = 256 << 10
)

// batchEntry is one result in a batch.
type batchEntry struct {
	ID         int64           `json:"id"`
	Handler    string          `json:"handler"`
	Deliveries int             `json:"deliveries"`
	Result     json.RawMessage `json:"result"`
}

// batchSubject is the subject of a batch of results of t's instance
// whose first task is t.
func batchSubject(n names, t Task) string {
	_, pref := n.resultStream(max(t.Results, 0))
	return pref + t.Instance + ".batch." + strconv.FormatInt(t.ID, 10)
}

// batchMsg builds the message of a batch of results of one instance and
// results stream, the first of ps naming it.
func batchMsg(n names, ps []pendingResult) (*nats.Msg, error) {
	entries := make([]batchEntry, len(ps))
	ids := make([]string, len(ps))
	for i, p := range ps {
		entries[i] = batchEntry{ID: p.t.ID, Handler: p.t.Handler, Deliveries: p.n, Result: p.result}
		ids[i] = strconv.FormatInt(p.t.ID, 10)
	}
	body, err := json.Marshal(entries)
	if err != nil {
		return nil, fmt.Errorf("zealgo: jstask: batch of results: %w", err)
	}
	msg := nats.NewMsg(batchSubject(n, ps[0].t))
	msg.Header.Set(hdrBatch, batchFormat)
	msg.Header.Set(hdrBatchIDs, strings.Join(ids, ","))
	msg.Data = body
	return msg, nil
}

// decodeBatch reads a batch message of a format this version knows.
func decodeBatch(m jetstream.Msg) ([]batchEntry, error) {
	if v := m.Headers().Get(hdrBatch); v != batchFormat {
		return nil, fmt.Errorf("zealgo: jstask: batch of results of format %q: this zealgo reads format %s; upgrade it", v, batchFormat)
	}
	var entries []batchEntry
	if err := json.Unmarshal(m.Data(), &entries); err != nil {
		return nil, fmt.Errorf("zealgo: jstask: undecodable batch of results: %w", err)
	}
	return entries, nil
}

// resultFor builds the result message of delivery n of t, received as m
// (resultMsg). That of a task that may have run before is marked
// (hdrRerun), so that its instance checks for an earlier result, batched,
// before handing it over.
func resultFor(ns names, m jetstream.Msg, t Task, result json.RawMessage, runErr error, n int) *nats.Msg {
	msg := resultMsg(ns, t, result, runErr, n)
	if mayHaveRun(m, n) {
		msg.Header.Set(hdrRerun, strconv.FormatInt(t.Dispatched.UnixNano(), 10))
	}
	return msg
}

// mayHaveRun reports whether delivery n of a task, received as m, may
// follow a run: a delivery again, or a copy of an ambiguous dispatch.
func mayHaveRun(m jetstream.Msg, n int) bool { return n > 1 || maybeRan(m) }

// batchIndex knows the task ids of the batched results of instances on
// results streams, read from the streams when asked (headers only),
// from the earliest dispatch time asked about on.
type batchIndex struct {
	js    jetstream.JetStream
	n     names
	mu    sync.Mutex
	scans map[string]*batchScan // by stream and instance
}

// batchScan is what was read of the batches of one instance on one
// stream: the ids in the batches stored from `from` to sequence last.
type batchScan struct {
	from time.Time
	last uint64
	ids  map[int64]struct{}
}

// maxIndexed bounds the ids one scan keeps; beyond, it starts again.
const maxIndexed = 4 << 20

func newBatchIndex(js jetstream.JetStream, n names) *batchIndex {
	return &batchIndex{js: js, n: n, scans: map[string]*batchScan{}}
}

// has reports whether a batch holds the result of t, stored since its
// dispatch.
func (x *batchIndex) has(ctx context.Context, t Task) (bool, error) {
	if x == nil {
		return false, nil
	}
	stream, pref := x.n.resultStream(max(t.Results, 0))
	key := stream + " " + t.Instance
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.scans[key]
	if s == nil || t.Dispatched.Before(s.from) || len(s.ids) > maxIndexed {
		s = &batchScan{from: t.Dispatched.Add(-time.Second), ids: map[int64]struct{}{}}
		x.scans[key] = s
	}
	if _, ok := s.ids[t.ID]; ok {
		return true, nil
	}
	if err := s.read(ctx, x.js, stream, pref+t.Instance+".batch.>"); err != nil {
		return false, err
	}
	_, ok := s.ids[t.ID]
	return ok, nil
}

// read reads the batches stored after those read before, to the end.
func (s *batchScan) read(ctx context.Context, js jetstream.JetStream, stream, filter string) error {
	// Removed once read, else after 5s of no use (this process died).
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}, HeadersOnly: true, InactiveThreshold: 5 * time.Second}
	if s.last == 0 {
		from := s.from
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &from
	} else {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, s.last+1
	}
	cons, err := js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return fmt.Errorf("zealgo: jstask: read batches of %s: %w", stream, err)
	}
	defer func() {
		if info := cons.CachedInfo(); info != nil {
			_ = js.DeleteConsumer(context.WithoutCancel(ctx), stream, info.Name)
		}
	}()
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("zealgo: jstask: read batches of %s: %w", stream, err)
	}
	for pending := info.NumPending; pending > 0; {
		batch, err := cons.Fetch(int(min(pending, 1024)), jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return fmt.Errorf("zealgo: jstask: read batches of %s: %w", stream, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			meta, err := m.Metadata()
			if err != nil {
				continue
			}
			s.last, pending = meta.Sequence.Stream, meta.NumPending
			for _, id := range strings.Split(m.Headers().Get(hdrBatchIDs), ",") {
				if v, err := strconv.ParseInt(id, 10, 64); err == nil {
					s.ids[v] = struct{}{}
				}
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return fmt.Errorf("zealgo: jstask: read batches of %s: %w", stream, err)
		}
		if got == 0 {
			return fmt.Errorf("zealgo: jstask: read batches of %s: %d left unread", stream, pending)
		}
	}
	return nil
}
