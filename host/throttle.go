package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ThrottleStore counts failures by key for Throttle, as a token bucket
// holding limit tokens that refill over window: each failure takes one,
// and a key with none left must wait. The default keeps the counts in the
// memory of the process (x/time/rate, as the rate-limit alias); a store
// shared by several instances makes the limit hold across them. Every
// method may be called by several goroutines at once.
type ThrottleStore interface {
	// Wait returns how long key must wait before its next try; 0 when
	// it may try now.
	Wait(ctx context.Context, key string, limit int, window time.Duration) (time.Duration, error)
	// Fail records a failure of key.
	Fail(ctx context.Context, key string, limit int, window time.Duration) error
	// Reset forgets the failures of key.
	Reset(ctx context.Context, key string) error
}

// Throttle limits failed attempts per key, such as a client address and a
// username: Config.ThrottleLimit failures within Config.ThrottleWindow
// (default 5 a minute), then every attempt is refused with 429 until the
// key has waited. Get one with App.Throttle. A log-in handler:
//
//	t := api.App().Throttle("login")
//	keys := []string{"addr:" + api.ClientIP(), "user:" + strings.ToLower(username)}
//	if e := t.Check(keys...); e != nil {
//		return e // 429 too_many_requests with Retry-After
//	}
//	if !passwordOK {
//		t.Fail(keys...)
//		return host.NewError(401, "invalid_credentials", "wrong username or password")
//	}
//
// A store that fails lets the attempt through and logs the failure.
type Throttle struct {
	name   string
	limit  int
	window time.Duration
	store  ThrottleStore
	app    *App
}

// newThrottle is App.Throttle.
func newThrottle(a *App, name string) *Throttle {
	limit, window := a.cfg.ThrottleLimit, a.cfg.ThrottleWindow
	if limit <= 0 {
		limit = 5
	}
	if window <= 0 {
		window = time.Minute
	}
	return &Throttle{name: name, limit: limit, window: window, store: throttleStore(a), app: a}
}

// throttleStore returns Config.ThrottleStore, else the counter that
// instances on one shared NATS share, else the memory store of the
// application, made on first use.
func throttleStore(a *App) ThrottleStore {
	if a.cfg.ThrottleStore != nil {
		return a.cfg.ThrottleStore
	}
	if a.rt.nats.counter != nil { // several instances share one NATS (counter.go)
		window := a.cfg.ThrottleWindow
		if window <= 0 {
			window = time.Minute
		}
		return &sharedThrottle{c: a.rt.nats.counter, window: window}
	}
	a.throttleOnce.Do(func() { a.throttleMem = &memoryThrottle{keys: map[string]*rate.Limiter{}} })
	return a.throttleMem
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

// Check returns nil when every key may try now, else the 429
// too_many_requests to answer, with Retry-After in seconds.
func (t *Throttle) Check(keys ...string) *Error {
	var wait time.Duration
	for _, k := range keys {
		d, err := t.store.Wait(context.Background(), t.key(k), t.limit, t.window)
		if err != nil {
			t.app.Logger().Error("zealgo: throttle store", "throttle", t.name, "err", err)
			continue
		}
		wait = max(wait, d)
	}
	if wait <= 0 {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	e := errorf(http.StatusTooManyRequests, CodeTooManyRequests,
		"Too many failed attempts. Try again in %d seconds.", secs)
	e.Header = http.Header{"Retry-After": {strconv.Itoa(secs)}}
	return e
}

// Fail records a failed attempt of every key.
func (t *Throttle) Fail(keys ...string) {
	for _, k := range keys {
		if err := t.store.Fail(context.Background(), t.key(k), t.limit, t.window); err != nil {
			t.app.Logger().Error("zealgo: throttle store", "throttle", t.name, "err", err)
		}
	}
}

// Reset forgets the failures of every key, e.g. of a username that has
// just logged in.
func (t *Throttle) Reset(keys ...string) {
	for _, k := range keys {
		if err := t.store.Reset(context.Background(), t.key(k)); err != nil {
			t.app.Logger().Error("zealgo: throttle store", "throttle", t.name, "err", err)
		}
	}
}

// memoryThrottle is the default ThrottleStore: a rate.Limiter per key,
// dropped once it has refilled.
type memoryThrottle struct {
	mu        sync.Mutex
	keys      map[string]*rate.Limiter
	lastSweep time.Time
}

func (m *memoryThrottle) limiter(key string, limit int, window time.Duration, now time.Time) *rate.Limiter {
	if now.Sub(m.lastSweep) > window {
		m.lastSweep = now
		for k, l := range m.keys {
			if l.TokensAt(now) >= float64(l.Burst()) {
				delete(m.keys, k)
			}
		}
	}
	l := m.keys[key]
	if l == nil {
		l = rate.NewLimiter(rate.Every(window/time.Duration(limit)), limit)
		m.keys[key] = l
	}
	return l
}

func (m *memoryThrottle) Wait(_ context.Context, key string, limit int, window time.Duration) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.keys[key]
	if l == nil {
		return 0, nil
	}
	tokens := l.TokensAt(time.Now())
	if tokens >= 1 {
		return 0, nil
	}
	return time.Duration((1 - tokens) / float64(l.Limit()) * float64(time.Second)), nil
}

func (m *memoryThrottle) Fail(_ context.Context, key string, limit int, window time.Duration) error {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.limiter(key, limit, window, now).AllowN(now, 1)
	return nil
}

func (m *memoryThrottle) Reset(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.keys, key)
	return nil
}
