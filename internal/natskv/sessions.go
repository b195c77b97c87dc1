// Package natskv keeps the state that several zealgo instances share in
// NATS JetStream key-value buckets: the server-side sessions (Sessions)
// and fixed-window counters for rate limits (Counter). With the embedded
// NATS server nothing else needs to be installed.
package natskv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// SessionsBucket is the sessions bucket's default name.
const SessionsBucket = "zealgo_sessions"

// SessionConfig configures the sessions bucket. The zero value of each
// field means its default.
type SessionConfig struct {
	// Bucket is the bucket's name; default "zealgo_sessions".
	Bucket string
	// MaxTTL is the longest lifetime a session may be saved with, and how
	// long a session that is not saved again stays in the bucket; default
	// 30 days.
	MaxTTL time.Duration
	// Replicas is the number of copies in a cluster; default 1.
	Replicas int
}

// Sessions keeps encoded sessions by id in a key-value bucket. Each value
// is the session's expiry (8 bytes, Unix nanoseconds, big-endian)
// followed by its data; an expired session reads as missing, and the
// bucket's age limit (MaxTTL) removes those never saved again.
type Sessions struct {
	kv     jetstream.KeyValue
	maxTTL time.Duration
}

// OpenSessions creates the bucket, or updates it to cfg.
func OpenSessions(ctx context.Context, js jetstream.JetStream, cfg SessionConfig) (*Sessions, error) {
	if cfg.Bucket == "" {
		cfg.Bucket = SessionsBucket
	}
	if cfg.MaxTTL <= 0 {
		cfg.MaxTTL = 30 * 24 * time.Hour
	}
	kv, err := openBucket(ctx, js, jetstream.KeyValueConfig{
		Bucket:      cfg.Bucket,
		Description: "zealgo sessions",
		TTL:         cfg.MaxTTL,
		Storage:     jetstream.FileStorage,
		Replicas:    max(cfg.Replicas, 1),
	})
	if err != nil {
		return nil, err
	}
	return &Sessions{kv: kv, maxTTL: cfg.MaxTTL}, nil
}

// openBucket creates or updates a bucket.
func openBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("zealgo: natskv: bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// Load returns the data saved under id, and false when there is none or
// it has expired.
func (s *Sessions) Load(ctx context.Context, id string) ([]byte, bool, error) {
	if !validKey(id) {
		return nil, false, nil
	}
	e, err := getRetrying(ctx, s.kv, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("zealgo: natskv: load session: %w", err)
	}
	v := e.Value()
	if len(v) < 8 || time.Now().UnixNano() > int64(binary.BigEndian.Uint64(v)) {
		return nil, false, nil
	}
	return v[8:], true, nil
}

// Save stores data under id for ttl, which must be positive and at most
// SessionConfig.MaxTTL.
func (s *Sessions) Save(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	if !validKey(id) {
		return fmt.Errorf("zealgo: natskv: session id %q is not a valid key", id)
	}
	if ttl <= 0 || ttl > s.maxTTL {
		return fmt.Errorf("zealgo: natskv: session lifetime %v: want more than 0 and at most %v", ttl, s.maxTTL)
	}
	v := make([]byte, 8, 8+len(data))
	binary.BigEndian.PutUint64(v, uint64(time.Now().Add(ttl).UnixNano()))
	if _, err := s.kv.Put(ctx, id, append(v, data...)); err != nil {
		return fmt.Errorf("zealgo: natskv: save session: %w", err)
	}
	return nil
}

// Delete removes the session id; a missing one is not an error.
func (s *Sessions) Delete(ctx context.Context, id string) error {
	if !validKey(id) {
		return nil
	}
	if err := s.kv.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("zealgo: natskv: delete session: %w", err)
	}
	return nil
}

// validKey reports whether id can be a key: letters, digits, '-', '_'
// and '=' (base64url), at most 256 bytes.
func validKey(id string) bool {
	if id == "" || len(id) > 256 {
		return false
	}
	for i := range len(id) {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '=':
		default:
			return false
		}
	}
	return true
}

// getRetrying gets key, asking again each second while ctx lasts when
// no answer comes: a cluster that lost the node leading the bucket
// answers once it has elected another.
func getRetrying(ctx context.Context, kv jetstream.KeyValue, key string) (jetstream.KeyValueEntry, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		e, err := kv.Get(actx, key)
		cancel()
		if err == nil || ctx.Err() != nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) ||
			errors.Is(err, nats.ErrTimeout)) {
			return e, err
		}
	}
}
