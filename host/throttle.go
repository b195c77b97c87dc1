package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/zealgo/zealgo/internal/natskv"
)

// ThrottleStore counts the attempts of Throttle by key, in a rolling
// window: at most limit attempts of a key within any window. An attempt
// is counted when it begins, before the password is checked, so that
// attempts under way count; one that succeeds is uncounted (Release). The
// default keeps the counts in the memory of the process, or, when NATS is
// on, in its key-value store, where they outlive the process and hold
// across the instances that share it. Every method may be called by
// several goroutines at once.
type ThrottleStore interface {
	// Reserve counts an attempt of key, unless key has made limit
	// attempts within the last window: then it counts none and returns
	// how long until it may try. ticket names the attempt counted for
	// Release; it is never 0.
	Reserve(ctx context.Context, key string, limit int, window time.Duration) (ticket int64, wait time.Duration, err error)
	// Release uncounts the attempt of key that Reserve counted as ticket.
	Release(ctx context.Context, key string, ticket int64) error
	// Reset uncounts every attempt of key.
	Reset(ctx context.Context, key string) error
}

// Throttle limits the attempts per key, such as a client address and a
// username, that may be under way or have failed: Config.ThrottleLimit
// within any Config.ThrottleWindow (default 5 a minute, rolling), then
// every attempt is refused with 429 until the oldest leaves the window.
// An attempt counts from its beginning (Begin), before the password is
// checked, so that a burst of concurrent attempts gets at most the limit
// checked; one that succeeds is uncounted (Attempt.Succeed). Get one with
// App.Throttle. A log-in handler:
//
//	t := api.App().Throttle("login")
//	keys := []string{"addr:" + api.ClientIP(), "user:" + strings.ToLower(username)}
//	at, e := t.Begin(keys...)
//	if e != nil {
//		return e // 429 too_many_requests with Retry-After
//	}
//	if !passwordOK {
//		return host.NewError(401, "invalid_credentials", "wrong username or password")
//	}
//	at.Succeed()
//	t.Reset(keys[1]) // forget the username's failures
//
// Keys are tried in order, and a key that refuses leaves the later ones
// untouched: with the address first, a client past its own limit does not
// count against the username. A username's limit still lets a third party
// lock its account out for a window by failing from several addresses;
// the per-address limit bounds how fast one address can.
//
// A store that fails lets the attempt through and logs the failure.
type Throttle struct {
	name   string
	limit  int
	window time.Duration
	store  ThrottleStore
	log    func() *slog.Logger // the application's log (App.Logger)
}

// newThrottle is App.Throttle: a throttle of cfg's limit and window on
// store.
func newThrottle(name string, cfg *Config, store ThrottleStore, log func() *slog.Logger) *Throttle {
	limit, window := cfg.ThrottleLimit, cfg.ThrottleWindow
	if limit <= 0 {
		limit = 5
	}
	if window <= 0 {
		window = time.Minute
	}
	return &Throttle{name: name, limit: limit, window: window, store: store, log: log}
}

// throttleStore returns Config.ThrottleStore, else the NATS key-value
// store when NATS is on (counter, counter.go), else the memory store of
// the application, made on first use.
func throttleStore(cfg *Config, counter *natskv.Counter, mem *lazyMemoryThrottle) ThrottleStore {
	if cfg.ThrottleStore != nil {
		return cfg.ThrottleStore
	}
	if counter != nil {
		return natsThrottle{counter}
	}
	mem.once.Do(func() { mem.m = &memoryThrottle{keys: map[string][]int64{}} })
	return mem.m
}

// lazyMemoryThrottle is the application's memory store, made on first
// use.
type lazyMemoryThrottle struct {
	once sync.Once
	m    *memoryThrottle
}

// key names k within the throttle; a long key (a username as typed) is
// hashed, so that the store holds short keys.
func (t *Throttle) key(k string) string {
	if len(k) > 128 {
		sum := sha256.Sum256([]byte(k))
		k = "sha256:" + hex.EncodeToString(sum[:])
	}
	return t.name + "\x00" + k
}

// Attempt is an attempt that Throttle.Begin counted: it stays counted,
// as a failure, unless it succeeds.
type Attempt struct {
	t       *Throttle
	keys    []string
	tickets []int64 // per key; 0: the store failed, nothing to release
}

// storeTimeout bounds each call to the throttle's store.
const storeTimeout = 2 * time.Second

// Begin counts an attempt of every key, in order, and returns it; or,
// when a key has reached the limit, counts none and returns the 429
// too_many_requests to answer, with Retry-After in seconds.
func (t *Throttle) Begin(keys ...string) (*Attempt, *Error) {
	at := &Attempt{t: t, keys: keys, tickets: make([]int64, len(keys))}
	for i, k := range keys {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		ticket, wait, err := t.store.Reserve(ctx, t.key(k), t.limit, t.window)
		cancel()
		switch {
		case err != nil:
			t.logFailure(err)
		case ticket == 0:
			at.keys, at.tickets = keys[:i], at.tickets[:i]
			at.Succeed() // uncount the keys before
			return nil, tooMany(wait)
		}
		at.tickets[i] = ticket
	}
	return at, nil
}

// tooMany is the 429 answer of a key that must wait.
func tooMany(wait time.Duration) *Error {
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	e := errorf(http.StatusTooManyRequests, CodeTooManyRequests,
		"Too many failed attempts. Try again in %d seconds.", secs)
	e.Header = http.Header{"Retry-After": {strconv.Itoa(secs)}}
	return e
}

// Succeed uncounts the attempt: only failed attempts stay counted. A nil
// Attempt does nothing.
func (at *Attempt) Succeed() {
	if at == nil {
		return
	}
	for i, k := range at.keys {
		if at.tickets[i] == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		if err := at.t.store.Release(ctx, at.t.key(k), at.tickets[i]); err != nil {
			at.t.logFailure(err)
		}
		cancel()
		at.tickets[i] = 0
	}
}

// Check returns nil when every key may try now, else the 429 answer
// (Begin's), counting nothing.
//
// Deprecated: Check then Fail lets every attempt of a burst through until
// the first failure is counted; use Begin, which counts the attempt before
// the check.
func (t *Throttle) Check(keys ...string) *Error {
	at, e := t.Begin(keys...)
	at.Succeed()
	return e
}

// Fail counts a failed attempt of every key.
//
// Deprecated: use Begin, which counts the attempt before the check.
func (t *Throttle) Fail(keys ...string) {
	for _, k := range keys {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		if _, _, err := t.store.Reserve(ctx, t.key(k), t.limit, t.window); err != nil {
			t.logFailure(err)
		}
		cancel()
	}
}

// Reset forgets the attempts of every key, e.g. of a username that has
// just logged in.
func (t *Throttle) Reset(keys ...string) {
	for _, k := range keys {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		if err := t.store.Reset(ctx, t.key(k)); err != nil {
			t.logFailure(err)
		}
		cancel()
	}
}

func (t *Throttle) logFailure(err error) {
	t.log().Error("zealgo: throttle store; attempt let through", "throttle", t.name, "err", err)
}

// memoryThrottle is the default ThrottleStore without NATS: the times of
// each key's attempts (natskv.Admit), a key dropped once they have all
// left the window.
type memoryThrottle struct {
	mu        sync.Mutex
	keys      map[string][]int64
	lastSweep time.Time
	window    time.Duration // the longest seen, for the sweep
}

func (m *memoryThrottle) Reserve(_ context.Context, key string, limit int, window time.Duration) (int64, time.Duration, error) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.window = max(m.window, window)
	if now.Sub(m.lastSweep) > m.window {
		m.lastSweep = now
		for k, stamps := range m.keys {
			if len(stamps) == 0 || stamps[len(stamps)-1] <= now.UnixNano()-int64(m.window) {
				delete(m.keys, k)
			}
		}
	}
	kept, ticket, wait := natskv.Admit(m.keys[key], now.UnixNano(), limit, window)
	m.keys[key] = kept
	return ticket, wait, nil
}

func (m *memoryThrottle) Release(_ context.Context, key string, ticket int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if stamps, ok := m.keys[key]; ok {
		m.keys[key] = natskv.Withdraw(stamps, ticket)
	}
	return nil
}

func (m *memoryThrottle) Reset(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.keys, key)
	return nil
}
