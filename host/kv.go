package host

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The errors of KV, for errors.Is.
var (
	// ErrKVNotFound: the key holds no value (never set, deleted, or its
	// time to live has passed).
	ErrKVNotFound = errors.New("zealgo: kv: key not found")
	// ErrKVExists: KV.Create found the key set.
	ErrKVExists = errors.New("zealgo: kv: key exists")
	// ErrKVConflict: KV.Update found the key at another revision than
	// the one given (someone wrote it meanwhile), or gone.
	ErrKVConflict = errors.New("zealgo: kv: revision conflict")
	// ErrKVBucketLost: the bucket's JetStream bucket is gone from the
	// NATS server while this process had it open (deleted by hand, or
	// the server lost its data). It is not created again behind the
	// application's back: a restart creates it, empty.
	ErrKVBucketLost = errors.New("zealgo: kv: bucket lost")
)

// KVOption is a setting of a bucket, given to App.KV; it applies when
// the bucket is first opened in the process (see BucketTTL).
type KVOption func(*kvOptions)

// kvOptions are the settings of a bucket that KVOptions set.
type kvOptions struct {
	ttl time.Duration // 0: not given
}

// BucketTTL gives every key of the bucket a time to live: a key is gone
// ttl after its last write, whatever wrote it (a key's own, shorter time
// to live, WithTTL, still applies). ttl is at least one second. On NATS
// it is the JetStream bucket's TTL, set (or changed) when the bucket is
// first opened in the process: every instance and task should give the
// same. Opening the bucket again without BucketTTL keeps the bucket's;
// with another value it fails with an error that says so.
//
//	cache := api.App().KV("cache", host.BucketTTL(10*time.Minute))
func BucketTTL(ttl time.Duration) KVOption {
	return func(o *kvOptions) { o.ttl = ttl }
}

// KVEntry is a key's value and its revision, which KV.Update compares.
type KVEntry struct {
	Key      string
	Value    string
	Revision uint64
}

// KV is a bucket of shared state (App.KV): string values under keys,
// each write giving the key a new revision. On NATS the bucket is a
// JetStream key-value bucket, zealgo_kv_<name>, shared by every instance
// and every task worker on the same NATS, with the replica count of the
// task streams; without NATS it lives in the server process (a task
// worker's calls go to its server) and is lost at restart. Both behave
// the same: compare-and-set, counters and time to live included.
//
// Keys are 1 to 512 characters among letters, digits and - _ = / . (not
// starting or ending with '.'). Every method takes a context that bounds
// the call on NATS: the request's (api.Context()) or the task's.
type KV struct {
	shared any // *sharedState; any: see sharedOf
	bucket string
	ttl    time.Duration
	opts   kvOptions // for the bucket's first opening
	err    error     // an invalid bucket name or option: every method returns it
}

// sharedOf returns the shared state kv's calls go to (KV.shared is an
// any: see rtOf).
func sharedOf(kv *KV) *sharedState {
	s, _ := kv.shared.(*sharedState)
	return s
}

// newKV returns the bucket called bucket of shared with its options.
func newKV(shared *sharedState, bucket string, opts []KVOption) *KV {
	kv := &KV{shared: shared, bucket: bucket, err: checkKVBucket(bucket)}
	for _, o := range opts {
		if o != nil {
			o(&kv.opts)
		}
	}
	if kv.err == nil && kv.opts.ttl != 0 && kv.opts.ttl < minKVTTL {
		kv.err = fmt.Errorf("zealgo: kv %s: bucket time to live %v: want at least %v", bucket, kv.opts.ttl, minKVTTL)
	}
	return kv
}

// minKVTTL is the shortest time to live, JetStream's.
const minKVTTL = time.Second

// WithTTL returns the bucket whose writes (Put, Create, Update, Incr,
// CompareAndSwap) give their key a time to live: it is gone ttl after
// its last write. ttl is at least one second.
//
//	otp := api.App().KV("otp").WithTTL(5 * time.Minute)
func (kv *KV) WithTTL(ttl time.Duration) *KV {
	c := *kv
	c.ttl = ttl
	if ttl < minKVTTL && c.err == nil {
		c.err = fmt.Errorf("zealgo: kv %s: time to live %v: want at least %v", kv.bucket, ttl, minKVTTL)
	}
	return &c
}

// Get returns key's entry, or ErrKVNotFound.
func (kv *KV) Get(ctx context.Context, key string) (KVEntry, error) {
	r, err := kv.do(ctx, kvOp{Op: "get", Key: key})
	return r.Entry, err
}

// Put sets key to value and returns its new revision.
func (kv *KV) Put(ctx context.Context, key, value string) (uint64, error) {
	r, err := kv.do(ctx, kvOp{Op: "put", Key: key, Value: value})
	return r.Entry.Revision, err
}

// Create sets key to value only when it holds none, and returns its
// revision; ErrKVExists when it holds one.
func (kv *KV) Create(ctx context.Context, key, value string) (uint64, error) {
	r, err := kv.do(ctx, kvOp{Op: "create", Key: key, Value: value})
	return r.Entry.Revision, err
}

// Update sets key to value only when its revision is still revision (as
// Get returned it), and returns the new revision; ErrKVConflict when the
// key was written or deleted meanwhile.
func (kv *KV) Update(ctx context.Context, key, value string, revision uint64) (uint64, error) {
	r, err := kv.do(ctx, kvOp{Op: "update", Key: key, Value: value, Revision: revision})
	return r.Entry.Revision, err
}

// Delete removes key; deleting a missing key is no error.
func (kv *KV) Delete(ctx context.Context, key string) error {
	_, err := kv.do(ctx, kvOp{Op: "delete", Key: key})
	return err
}

// maxCASRounds bounds the compare-and-set rounds of Incr and
// CompareAndSwap under contention.
const maxCASRounds = 1000

// CompareAndSwap sets key to value only when it holds old ("" matches a
// key that holds no value) and reports whether it did. Concurrent
// writers are serialized by revision: of two swaps from the same old
// value, one succeeds.
func (kv *KV) CompareAndSwap(ctx context.Context, key, old, value string) (bool, error) {
	for range maxCASRounds {
		e, err := kv.Get(ctx, key)
		switch {
		case errors.Is(err, ErrKVNotFound):
			if old != "" {
				return false, nil
			}
			_, err = kv.Create(ctx, key, value)
		case err != nil:
			return false, err
		case e.Value != old:
			return false, nil
		default:
			_, err = kv.Update(ctx, key, value, e.Revision)
		}
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, ErrKVExists) && !errors.Is(err, ErrKVConflict) {
			return false, err
		}
	}
	return false, fmt.Errorf("zealgo: kv %s: %q still conflicting after %d rounds", kv.bucket, key, maxCASRounds)
}

// Incr adds delta to the integer under key (0 when it holds none) and
// returns the new value: every increment, from any instance or task, is
// counted once.
func (kv *KV) Incr(ctx context.Context, key string, delta int64) (int64, error) {
	for range maxCASRounds {
		e, err := kv.Get(ctx, key)
		var n int64
		switch {
		case errors.Is(err, ErrKVNotFound):
			n = delta
			_, err = kv.Create(ctx, key, strconv.FormatInt(n, 10))
		case err != nil:
			return 0, err
		default:
			cur, perr := strconv.ParseInt(e.Value, 10, 64)
			if perr != nil {
				return 0, fmt.Errorf("zealgo: kv %s: %q holds %q, no integer", kv.bucket, key, e.Value)
			}
			n = cur + delta
			_, err = kv.Update(ctx, key, strconv.FormatInt(n, 10), e.Revision)
		}
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, ErrKVExists) && !errors.Is(err, ErrKVConflict) {
			return 0, err
		}
	}
	return 0, fmt.Errorf("zealgo: kv %s: %q still conflicting after %d rounds", kv.bucket, key, maxCASRounds)
}

// do checks the bucket and key and runs op on the bucket's store.
func (kv *KV) do(ctx context.Context, op kvOp) (kvResult, error) {
	if kv.err != nil {
		return kvResult{}, kv.err
	}
	if err := checkKVKey(op.Key); err != nil {
		return kvResult{}, fmt.Errorf("zealgo: kv %s: %w", kv.bucket, err)
	}
	op.Bucket, op.TTL, op.BucketTTL = kv.bucket, kv.ttl, kv.opts.ttl
	return sharedOf(kv).kv(ctx, op)
}

// checkKVBucket checks a bucket name: 1 to 64 letters, digits, '_' or '-'.
func checkKVBucket(name string) error {
	if len(name) > 64 || !plainName(name) {
		return fmt.Errorf("zealgo: kv bucket %q: want 1 to 64 letters, digits, '_' or '-'", name)
	}
	return nil
}

// checkKVKey checks a key: what JetStream accepts.
func checkKVKey(key string) error {
	if key == "" || len(key) > 512 || key[0] == '.' || key[len(key)-1] == '.' {
		return fmt.Errorf("key %q: want 1 to 512 letters, digits or - _ = / . (not first or last)", key)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '=' || c == '/' || c == '.'
		if !ok {
			return fmt.Errorf("key %q: want letters, digits or - _ = / . only", key)
		}
	}
	return nil
}

// plainName reports whether s is 1 or more letters, digits, '_' or '-'
// (as validName, kept apart so that the shared state's files depend on
// none of the server's).
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return s != ""
}
