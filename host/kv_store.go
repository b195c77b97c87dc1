package host

import (
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
	Op       string        `json:"op"` // get, put, create, update, delete
	Bucket   string        `json:"bucket"`
	Key      string        `json:"key"`
	Value    string        `json:"value,omitempty"`
	Revision uint64        `json:"revision,omitempty"`
	TTL      time.Duration `json:"ttl,omitempty"`
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
// as a JetStream stream's sequence does.
type memKV struct {
	mu   sync.Mutex
	rev  uint64
	keys map[string]memEntry
	now  func() time.Time
}

type memEntry struct {
	value   string
	rev     uint64
	expires time.Time // zero: never
}

func newMemKV() *memKV { return &memKV{keys: map[string]memEntry{}, now: time.Now} }

// apply runs op under the bucket's lock.
func (m *memKV) apply(_ context.Context, op kvOp) (kvResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.keys[op.Key]
	if ok && !e.expires.IsZero() && !m.now().Before(e.expires) {
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
	if op.TTL > 0 {
		ne.expires = m.now().Add(op.TTL)
	}
	m.keys[op.Key] = ne
	return kvResult{Entry: KVEntry{Key: op.Key, Value: op.Value, Revision: m.rev}}, nil
}

// natsKV is a bucket on NATS JetStream.
type natsKV struct {
	kv     jetstream.KeyValue
	js     jetstream.JetStream
	prefix string // the subject of its keys: $KV.<bucket>.
}

// natsBucketPrefix names the JetStream buckets of App.KV.
const natsBucketPrefix = "zealgo_kv_"

// openNATSKV creates the bucket of name, or updates it to replicas. Keys
// may carry their own time to live (LimitMarkerTTL: NATS 2.11 or later).
func openNATSKV(ctx context.Context, js jetstream.JetStream, name string, replicas int) (*natsKV, error) {
	bucket := natsBucketPrefix + name
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:         bucket,
		Description:    "zealgo App.KV(" + name + ")",
		Storage:        jetstream.FileStorage,
		Replicas:       max(replicas, 1),
		LimitMarkerTTL: time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("zealgo: kv bucket %s on NATS: %w", name, err)
	}
	return &natsKV{kv: kv, js: js, prefix: "$KV." + bucket + "."}, nil
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
		return kvResult{}, natsKVError(op, err)
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
