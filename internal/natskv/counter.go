package natskv

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// CountersBucket is the counters bucket's default name.
const CountersBucket = "zealgo_counters"

// CounterConfig configures the counters bucket. The zero value of each
// field means its default.
type CounterConfig struct {
	// Bucket is the bucket's name; default "zealgo_counters".
	Bucket string
	// MaxWindow is the longest window Incr accepts; a counter stays in
	// the bucket that long after its last increment. Default 1h.
	MaxWindow time.Duration
	// Replicas is the number of copies in a cluster; default 1.
	Replicas int
}

// Counter counts events per key in fixed windows, shared by every
// instance on the same NATS: the login throttle and the rate-limit
// middleware count requests with it.
type Counter struct {
	kv        jetstream.KeyValue
	maxWindow time.Duration
	now       func() time.Time // time.Now; tests set it
}

// OpenCounter creates the bucket, or updates it to cfg.
func OpenCounter(ctx context.Context, js jetstream.JetStream, cfg CounterConfig) (*Counter, error) {
	if cfg.Bucket == "" {
		cfg.Bucket = CountersBucket
	}
	if cfg.MaxWindow <= 0 {
		cfg.MaxWindow = time.Hour
	}
	kv, err := openBucket(ctx, js, jetstream.KeyValueConfig{
		Bucket:      cfg.Bucket,
		Description: "zealgo rate-limit counters",
		TTL:         cfg.MaxWindow,
		Storage:     jetstream.FileStorage,
		Replicas:    max(cfg.Replicas, 1),
	})
	if err != nil {
		return nil, err
	}
	return &Counter{kv: kv, maxWindow: cfg.MaxWindow, now: time.Now}, nil
}

// maxAttempts bounds the compare-and-set rounds of one Incr.
const maxAttempts = 100

// Incr adds one to key's count in the current window and returns the new
// count. Windows are aligned on multiples of window since the Unix epoch
// (time.Truncate), so the current one ends at
// time.Now().Truncate(window).Add(window). key may be any string (a
// client address, a user name) of at most 256 bytes. Concurrent increments, from any
// instance, are all counted: each is a compare-and-set on the key's
// revision, retried on conflict.
func (c *Counter) Incr(ctx context.Context, key string, window time.Duration) (int64, error) {
	k, err := c.slotKey(key, window)
	if err != nil {
		return 0, err
	}
	for range maxAttempts {
		n, err := c.incr(ctx, k)
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, fmt.Errorf("zealgo: natskv: count %q: %w", key, err)
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("zealgo: natskv: count %q: %w", key, ctx.Err())
		}
	}
	return 0, fmt.Errorf("zealgo: natskv: count %q: still conflicting after %d attempts", key, maxAttempts)
}

// Count returns key's count in the current window (Incr's window).
func (c *Counter) Count(ctx context.Context, key string, window time.Duration) (int64, error) {
	k, err := c.slotKey(key, window)
	if err != nil {
		return 0, err
	}
	e, err := c.kv.Get(ctx, k)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("zealgo: natskv: count %q: %w", key, err)
	}
	n, err := strconv.ParseInt(string(e.Value()), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("zealgo: natskv: count %q: counter holds %q", key, e.Value())
	}
	return n, nil
}

// Clear forgets key's count in the current window.
func (c *Counter) Clear(ctx context.Context, key string, window time.Duration) error {
	k, err := c.slotKey(key, window)
	if err != nil {
		return err
	}
	if err := c.kv.Delete(ctx, k); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("zealgo: natskv: clear %q: %w", key, err)
	}
	return nil
}

// slotKey returns the bucket key of key in the current window.
func (c *Counter) slotKey(key string, window time.Duration) (string, error) {
	if window <= 0 || window > c.maxWindow {
		return "", fmt.Errorf("zealgo: natskv: window %v: want more than 0 and at most %v", window, c.maxWindow)
	}
	if len(key) > 256 {
		return "", fmt.Errorf("zealgo: natskv: counter key of %d bytes: the bound is 256", len(key))
	}
	slot := c.now().UnixNano() / int64(window)
	return "k" + base64.RawURLEncoding.EncodeToString([]byte(key)) + "." + strconv.FormatInt(slot, 10), nil
}

// incr makes one compare-and-set attempt.
func (c *Counter) incr(ctx context.Context, k string) (int64, error) {
	e, err := c.kv.Get(ctx, k)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		_, err = c.kv.Create(ctx, k, []byte("1"))
		return 1, err
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(e.Value()), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("counter holds %q", e.Value())
	}
	n++
	_, err = c.kv.Update(ctx, k, []byte(strconv.FormatInt(n, 10)), e.Revision())
	return n, err
}
