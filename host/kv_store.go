package host

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The stores of KV buckets: in the process (memKV) and on NATS JetStream
// (natsKV). Both apply kvOp the same way (kvStore).

// kvOp is one operation on a bucket; it is also what a task worker
// without NATS sends its server (shared.go).
type kvOp struct {
	Op        string        `json:"op"` // get, put, create, update, delete
	Bucket    string        `json:"bucket"`
	Key       string        `json:"key"`
	Value     string        `json:"value,omitempty"`
	Revision  uint64        `json:"revision,omitempty"`
	TTL       time.Duration `json:"ttl,omitempty"`
	BucketTTL time.Duration `json:"bucket_ttl,omitempty"` // BucketTTL, for the bucket's opening
}

// kvResult is an operation's entry (get) or new revision (writes).
type kvResult struct {
	Entry KVEntry `json:"entry"`
}

// kvStore is one bucket's store.
type kvStore interface {
	apply(ctx context.Context, op kvOp) (kvResult, error)
}

// memKV is a bucket in the process: revisions count the bucket's writes,
// as a JetStream stream's sequence does. A key past its time to live is
// dropped when touched, and by a sweep at each operation of up to
// sweepMax keys whose time has come (the earliest first), so that keys
// that are never touched again do not stay in memory.
type memKV struct {
	mu        sync.Mutex
	rev       uint64
	keys      map[string]memEntry
	expiry    expiryHeap
	now       func() time.Time
	bucketTTL time.Duration // the bucket's (BucketTTL), 0: none
}

type memEntry struct {
	value   string
	rev     uint64
	expires time.Time // zero: never
}

// sweepMax bounds the keys one operation's sweep drops: an operation
// writes one key at most, so the sweep outpaces the writes.
const sweepMax = 64

func newMemKV(ttl time.Duration) *memKV {
	return &memKV{keys: map[string]memEntry{}, now: time.Now, bucketTTL: ttl}
}

// apply runs op under the bucket's lock.
func (m *memKV) apply(_ context.Context, op kvOp) (kvResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweep(now)
	e, ok := m.keys[op.Key]
	if ok && !e.expires.IsZero() && !now.Before(e.expires) {
		delete(m.keys, op.Key)
		ok = false
	}
	switch op.Op {
	case "get":
		if !ok {
			return kvResult{}, ErrKVNotFound
		}
		return kvResult{Entry: KVEntry{Key: op.Key, Value: e.value, Revision: e.rev}}, nil
	case "delete":
		delete(m.keys, op.Key)
		return kvResult{}, nil
	case "create":
		if ok {
			return kvResult{}, ErrKVExists
		}
	case "update":
		if !ok || e.rev != op.Revision {
			return kvResult{}, ErrKVConflict
		}
	case "put":
	default:
		return kvResult{}, fmt.Errorf("zealgo: kv: unknown operation %q", op.Op)
	}
	m.rev++
	ne := memEntry{value: op.Value, rev: m.rev}
	// The shorter of the key's and the bucket's, as on JetStream.
	if ttl := shorterTTL(op.TTL, m.bucketTTL); ttl > 0 {
		ne.expires = now.Add(ttl)
		heap.Push(&m.expiry, expiring{key: op.Key, rev: m.rev, at: ne.expires})
	}
	m.keys[op.Key] = ne
	return kvResult{Entry: KVEntry{Key: op.Key, Value: op.Value, Revision: m.rev}}, nil
}

// sweep drops up to sweepMax keys whose time to live has passed.
func (m *memKV) sweep(now time.Time) {
	for range sweepMax {
		if len(m.expiry) == 0 || now.Before(m.expiry[0].at) {
			return
		}
		x := heap.Pop(&m.expiry).(expiring)
		if e, ok := m.keys[x.key]; ok && e.rev == x.rev {
			delete(m.keys, x.key)
		}
	}
}

// shorterTTL returns the shorter of two times to live, 0 meaning none.
func shorterTTL(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// expiring is when the write rev of key expires.
type expiring struct {
	key string
	rev uint64
	at  time.Time
}

// expiryHeap orders the writes with a time to live, earliest first
// (container/heap).
type expiryHeap []expiring

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiring)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// natsKV is a bucket on NATS JetStream.
type natsKV struct {
	kv     jetstream.KeyValue
	js     jetstream.JetStream
	name   string        // App.KV's
	stream string        // the bucket's stream: KV_<bucket>
	prefix string        // the subject of its keys: $KV.<bucket>.
	ttl    time.Duration // the bucket's TTL
}

// natsBucketPrefix names the JetStream buckets of App.KV.
const natsBucketPrefix = "zealgo_kv_"

// openNATSKV creates the bucket of name, or updates it to replicas and
// to ttl (BucketTTL; 0 keeps an existing bucket's). Keys may carry their
// own time to live (LimitMarkerTTL: NATS 2.11 or later).
func openNATSKV(ctx context.Context, js jetstream.JetStream, name string, replicas int, ttl time.Duration) (*natsKV, error) {
	bucket := natsBucketPrefix + name
	if ttl == 0 {
		if old, err := js.KeyValue(ctx, bucket); err == nil {
			st, err := old.Status(ctx)
			if err != nil {
				return nil, fmt.Errorf("zealgo: kv bucket %s on NATS: %w", name, err)
			}
			ttl = st.TTL()
		}
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:         bucket,
		Description:    "zealgo App.KV(" + name + ")",
		Storage:        jetstream.FileStorage,
		Replicas:       max(replicas, 1),
		TTL:            ttl,
		LimitMarkerTTL: time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("zealgo: kv bucket %s on NATS: %w", name, err)
	}
	return &natsKV{kv: kv, js: js, name: name, stream: "KV_" + bucket, prefix: "$KV." + bucket + ".", ttl: ttl}, nil
}

// lost returns ErrKVBucketLost, saying what to do, when the bucket's
// stream is gone from the server after err; else err.
func (n *natsKV) lost(ctx context.Context, err error) error {
	if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, jetstream.ErrNoStreamResponse) &&
		!errors.Is(err, jetstream.ErrStreamNotFound) && !errors.Is(err, jetstream.ErrBucketNotFound) {
		return err
	}
	if _, serr := n.js.Stream(ctx, n.stream); !errors.Is(serr, jetstream.ErrStreamNotFound) {
		return err
	}
	return fmt.Errorf("%w: bucket %s (NATS stream %s) is not on the NATS server any more (deleted, or the server lost its data); "+
		"its keys are lost, and it is not created again while zealgo runs: restart zealgo (and its task workers) to create it, empty",
		ErrKVBucketLost, n.name, n.stream)
}

// apply runs op on the bucket.
func (n *natsKV) apply(ctx context.Context, op kvOp) (kvResult, error) {
	var rev uint64
	var err error
	switch op.Op {
	case "get":
		var e jetstream.KeyValueEntry
		e, err = n.kv.Get(ctx, op.Key)
		if err == nil {
			return kvResult{Entry: KVEntry{Key: op.Key, Value: string(e.Value()), Revision: e.Revision()}}, nil
		}
	case "delete":
		err = n.kv.Delete(ctx, op.Key)
	case "put":
		if op.TTL > 0 {
			rev, err = n.publish(ctx, op, jetstream.WithMsgTTL(op.TTL))
		} else {
			rev, err = n.kv.PutString(ctx, op.Key, op.Value)
		}
	case "create":
		var opts []jetstream.KVCreateOpt
		if op.TTL > 0 {
			opts = append(opts, jetstream.KeyTTL(op.TTL))
		}
		rev, err = n.kv.Create(ctx, op.Key, []byte(op.Value), opts...)
	case "update":
		if op.TTL > 0 {
			rev, err = n.publish(ctx, op, jetstream.WithMsgTTL(op.TTL), jetstream.WithExpectLastSequencePerSubject(op.Revision))
		} else {
			rev, err = n.kv.Update(ctx, op.Key, []byte(op.Value), op.Revision)
		}
	default:
		return kvResult{}, fmt.Errorf("zealgo: kv: unknown operation %q", op.Op)
	}
	if err != nil {
		return kvResult{}, natsKVError(op, n.lost(ctx, err))
	}
	return kvResult{Entry: KVEntry{Key: op.Key, Value: op.Value, Revision: rev}}, nil
}

// publish writes op's value with opts, as the bucket's Put does.
func (n *natsKV) publish(ctx context.Context, op kvOp, opts ...jetstream.PublishOpt) (uint64, error) {
	ack, err := n.js.PublishMsg(ctx, &nats.Msg{Subject: n.prefix + op.Key, Data: []byte(op.Value)}, opts...)
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// natsKVError maps JetStream's errors to KV's.
func natsKVError(op kvOp, err error) error {
	var api *jetstream.APIError
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		if op.Op == "delete" {
			return nil
		}
		if op.Op == "get" {
			return ErrKVNotFound
		}
		return ErrKVConflict
	case op.Op == "create" && errors.Is(err, jetstream.ErrKeyExists):
		return ErrKVExists
	case errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch),
		errors.As(err, &api) && (api.ErrorCode == 10071 || api.ErrorCode == 10164):
		return ErrKVConflict
	}
	return fmt.Errorf("zealgo: kv %s: %s %q: %w", op.Bucket, op.Op, op.Key, err)
}
