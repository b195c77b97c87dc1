package host_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
)

// throttledLogin is a log-in handler on App.Throttle, as the sample's.
const throttledLogin = `//go:build ignore

package main

import (
	"strings"

	"github.com/zealgo/zealgo/host"
)

var login = func(api *host.API) any {
	t := api.App().Throttle("login")
	user := api.Req.Field("user")
	keys := []string{"addr:" + api.ClientIP(), "user:" + strings.ToLower(user)}
	at, e := t.Begin(keys...)
	if e != nil {
		return e
	}
	if api.Req.Field("password") != "right" {
		return host.NewError(401, "invalid_credentials", "wrong username or password")
	}
	at.Succeed()
	t.Reset(keys[1])
	return map[string]any{"user": user}
}
`

// TestThrottle: after the limit of failures a key gets 429 with
// Retry-After for every attempt, the right password too; keys are counted
// apart, per address and per username (issue 14, failure 6).
func TestThrottle(t *testing.T) {
	ta := newTestApp(t, map[string]string{"api/login.go": throttledLogin}, host.WithConfig(func(c *host.Config) {
		c.ThrottleLimit, c.ThrottleWindow = 3, time.Hour // no failure leaves the window during the test
		c.TrustedProxies = []string{"127.0.0.1"}         // so that X-Forwarded-For names the client
	}))
	try := func(user, password, from string) (int, string, string) {
		resp, body := do(t, nil, "POST", ta.srv.URL+"/api/login", strings.NewReader("user="+user+"&password="+password),
			"Content-Type", "application/x-www-form-urlencoded", "X-Forwarded-For", from)
		return resp.StatusCode, resp.Header.Get("Retry-After"), body
	}
	for i := 0; i < 3; i++ {
		if code, _, body := try("ada", "wrong", "203.0.113.1"); code != 401 {
			t.Fatalf("failure %d: %d %s", i+1, code, body)
		}
	}
	for _, password := range []string{"wrong", "right"} {
		code, retry, body := try("ada", password, "203.0.113.1")
		secs, err := strconv.Atoi(retry)
		if code != 429 || errCode(body) != host.CodeTooManyRequests || err != nil || secs < 1 || secs > 3600 {
			t.Errorf("%s password after 3 failures: %d Retry-After %q %s", password, code, retry, body)
		}
	}
	// The username is throttled from any address, the address for any username.
	if code, _, _ := try("ADA", "right", "203.0.113.2"); code != 429 {
		t.Errorf("the username from another address: %d, want 429", code)
	}
	if code, _, _ := try("grace", "right", "203.0.113.1"); code != 429 {
		t.Errorf("another username from the address: %d, want 429", code)
	}
	if code, _, body := try("grace", "right", "203.0.113.2"); code != 200 {
		t.Errorf("another username from another address: %d %s", code, body)
	}
}

// countingStore is a ThrottleStore that refuses a key after limit
// attempts, as a shared store would.
type countingStore struct {
	mu    sync.Mutex
	fails map[string]int
	calls int
}

func (s *countingStore) Reserve(_ context.Context, key string, limit int, window time.Duration) (int64, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.fails[key] >= limit {
		return 0, window, nil
	}
	s.fails[key]++
	return int64(s.fails[key]), 0, nil
}

func (s *countingStore) Release(_ context.Context, key string, _ int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.fails[key]--
	return nil
}

func (s *countingStore) Reset(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.fails, key)
	return nil
}

// TestThrottleStore: Config.ThrottleStore does the counting, the address
// first: a refused address leaves the username's count alone.
func TestThrottleStore(t *testing.T) {
	store := &countingStore{fails: map[string]int{}}
	ta := newTestApp(t, map[string]string{"api/login.go": throttledLogin}, host.WithConfig(func(c *host.Config) {
		c.ThrottleLimit, c.ThrottleWindow, c.ThrottleStore = 2, 90*time.Second, store
	}))
	codes := ""
	for i := 0; i < 3; i++ {
		resp, _ := do(t, nil, "POST", ta.srv.URL+"/api/login", strings.NewReader("user=ada&password=wrong"),
			"Content-Type", "application/x-www-form-urlencoded")
		codes += strconv.Itoa(resp.StatusCode) + " " + resp.Header.Get("Retry-After") + ";"
	}
	if codes != "401 ;401 ;429 90;" || store.calls != 5 || store.fails["login\x00user:ada"] != 2 {
		t.Errorf("answers %q after %d store calls, counts %v", codes, store.calls, store.fails)
	}
}
