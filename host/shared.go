package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zealgo/zealgo/internal/taskpool"
)

// sharedState is the application's shared state: the buckets of App.KV
// (kv.go, kv_store.go) and the subscriptions of App.Subscribe
// (pubsub.go). On NATS they live there, shared by the instances and task
// workers on it; without NATS in the server process, where a task
// worker's calls go through its pipe (taskpool.Calls, answered by
// serveCall).
type sharedState struct {
	log      *slog.Logger
	replicas int
	// conn returns the NATS connection, the application's or a task
	// worker's own (dialed on first use); nil without NATS.
	conn func() (*nats.Conn, error)
	// calls: a task worker without NATS asks its server.
	calls *taskpool.Calls
	// broadcast is App.Broadcast's in the server (live_hub.go), for
	// the broadcasts of task workers without NATS.
	broadcast func(room, msg string) error
	worker    bool

	mu      sync.Mutex
	js      jetstream.JetStream
	buckets map[string]openBucket
	subs    map[*subscription]struct{} // in-process subscriptions
}

// setup readies the server's side: conn is its NATS (nil conn: none),
// js the application's JetStream context on it (nil: none).
func (s *sharedState) setup(log *slog.Logger, replicas int, conn func() (*nats.Conn, error), js jetstream.JetStream,
	broadcast func(room, msg string) error) {
	s.log, s.replicas, s.conn, s.js, s.broadcast = log, replicas, conn, js, broadcast
}

// forWorker readies a task worker's side: through its own NATS
// connection (conn) when the application is on NATS, else through calls
// to its server.
func (s *sharedState) forWorker(log *slog.Logger, replicas int, conn func() (*nats.Conn, error), calls *taskpool.Calls) {
	s.log, s.replicas, s.worker = log, replicas, true
	if conn != nil {
		s.conn = conn
	} else {
		s.calls = calls
	}
}

// natsConn returns the NATS connection, nil without.
func (s *sharedState) natsConn() (*nats.Conn, error) {
	if s.conn == nil {
		return nil, nil
	}
	return s.conn()
}

// openBucket is a bucket opened in the process, with its time to live.
type openBucket struct {
	store kvStore
	ttl   time.Duration
}

// store returns the store of bucket, opening it on first use with the
// time to live ttl (BucketTTL; 0: none given).
func (s *sharedState) store(ctx context.Context, bucket string, ttl time.Duration) (kvStore, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.buckets[bucket]; ok {
		if ttl != 0 && ttl != b.ttl {
			return nil, fmt.Errorf("zealgo: kv %s: BucketTTL(%v), but the bucket was opened with a time to live of %v "+
				"(set when it is first opened in the process): give the same everywhere", bucket, ttl, b.ttl)
		}
		return b.store, nil
	}
	nc, err := s.natsConn()
	if err != nil {
		return nil, err
	}
	b, err := s.open(ctx, nc, bucket, ttl)
	if err != nil {
		return nil, err
	}
	if s.buckets == nil {
		s.buckets = map[string]openBucket{}
	}
	s.buckets[bucket] = b
	return b.store, nil
}

// open opens bucket on NATS (nc), or in the process without NATS, with
// the time to live ttl (0: an existing NATS bucket's).
func (s *sharedState) open(ctx context.Context, nc *nats.Conn, bucket string, ttl time.Duration) (openBucket, error) {
	if nc == nil {
		return openBucket{store: newMemKV(ttl), ttl: ttl}, nil
	}
	if s.js == nil { // a task worker's own connection; the server's is set up
		js, err := jetstream.New(nc)
		if err != nil {
			return openBucket{}, fmt.Errorf("zealgo: kv: %w", err)
		}
		s.js = js
	}
	st, err := openNATSKV(ctx, s.js, bucket, s.replicas, ttl)
	if err != nil {
		return openBucket{}, err
	}
	return openBucket{store: st, ttl: st.ttl}, nil
}

// kv runs op on its bucket, or asks the server to.
func (s *sharedState) kv(ctx context.Context, op kvOp) (kvResult, error) {
	if s.calls != nil {
		return s.remoteKV(ctx, op)
	}
	st, err := s.store(ctx, op.Bucket, op.BucketTTL)
	if err != nil {
		return kvResult{}, err
	}
	return st.apply(ctx, op)
}

// The operations a task worker without NATS asks its server, and the
// classes of KV's errors in the answer.
const (
	callKV        = "kv"
	callPublish   = "publish"
	callBroadcast = "broadcast"
)

var kvErrorCodes = map[string]error{"not_found": ErrKVNotFound, "exists": ErrKVExists, "conflict": ErrKVConflict}

// kvReply is the server's answer to a kv call.
type kvReply struct {
	kvResult
	Code string `json:"code,omitempty"` // a key of kvErrorCodes
	Err  string `json:"err,omitempty"`
}

// message is the body of a publish or broadcast call.
type message struct {
	To  string `json:"to"` // the subject or room
	Msg string `json:"msg"`
}

// remoteKV asks the server to run op.
func (s *sharedState) remoteKV(ctx context.Context, op kvOp) (kvResult, error) {
	body, err := json.Marshal(op)
	if err != nil {
		return kvResult{}, fmt.Errorf("zealgo: kv: %w", err)
	}
	raw, err := s.calls.Call(ctx, callKV, body)
	if err != nil {
		return kvResult{}, fmt.Errorf("zealgo: kv %s: %w", op.Bucket, err)
	}
	var rep kvReply
	if err := json.Unmarshal(raw, &rep); err != nil {
		return kvResult{}, fmt.Errorf("zealgo: kv %s: the server's answer: %w", op.Bucket, err)
	}
	if e := kvErrorCodes[rep.Code]; e != nil {
		return kvResult{}, e
	}
	if rep.Err != "" {
		return kvResult{}, errors.New(rep.Err)
	}
	return rep.kvResult, nil
}

// call sends a publish or broadcast to the server.
func (s *sharedState) call(op, to, msg string) error {
	body, err := json.Marshal(message{To: to, Msg: msg})
	if err == nil {
		_, err = s.calls.Call(context.Background(), op, body)
	}
	if err != nil {
		return fmt.Errorf("zealgo: %s: %w", op, err)
	}
	return nil
}

// serveCall answers a task worker's call (taskpool.Config.OnCall).
func (s *sharedState) serveCall(ctx context.Context, op string, body json.RawMessage) (json.RawMessage, error) {
	if op == callKV {
		return s.serveKV(ctx, body)
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("zealgo: %s: %w", op, err)
	}
	switch op {
	case callPublish:
		return nil, s.publish(m.To, m.Msg)
	case callBroadcast:
		if s.broadcast == nil {
			return nil, errors.New("zealgo: broadcast: the server has no live connections")
		}
		return nil, s.broadcast(m.To, m.Msg)
	}
	return nil, fmt.Errorf("zealgo: unknown call %q from a task worker", op)
}

// serveKV runs a worker's kv operation.
func (s *sharedState) serveKV(ctx context.Context, body json.RawMessage) (json.RawMessage, error) {
	var op kvOp
	if err := json.Unmarshal(body, &op); err != nil {
		return nil, fmt.Errorf("zealgo: kv: %w", err)
	}
	var rep kvReply
	var err error
	if err = checkKVBucket(op.Bucket); err == nil {
		if err = checkKVKey(op.Key); err == nil {
			rep.kvResult, err = s.kv(ctx, op)
		}
	}
	for code, e := range kvErrorCodes {
		if errors.Is(err, e) {
			rep.Code = code
		}
	}
	if err != nil && rep.Code == "" {
		rep.Err = err.Error()
	}
	return json.Marshal(rep)
}

// logger returns the application's logger, slog's default before start.
func (s *sharedState) logger() *slog.Logger {
	if s.log == nil {
		return slog.Default()
	}
	return s.log
}
