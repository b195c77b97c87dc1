package natskv

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/testutil"
)

// server starts an embedded server on dir and returns n connections to
// it, each standing for an instance.
func server(t *testing.T, dir string, n int) (*natsrv.Server, []jetstream.JetStream) {
	t.Helper()
	srv, err := natsrv.Start(natsrv.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	var js []jetstream.JetStream
	for range n {
		conn, err := natsrv.Connect(context.Background(), srv.URL(), natsrv.ConnectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conn.Close)
		js = append(js, conn.JS)
	}
	return srv, js
}

func openSessions(t *testing.T, js jetstream.JetStream) *Sessions {
	t.Helper()
	s, err := OpenSessions(context.Background(), js, SessionConfig{MaxTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const sid = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde" // the shape of a zealgo session id

func TestSessionsAreSharedAndDeleted(t *testing.T) {
	_, js := server(t, t.TempDir(), 2)
	a, b := openSessions(t, js[0]), openSessions(t, js[1])
	ctx := context.Background()
	if _, ok, err := a.Load(ctx, sid); ok || err != nil {
		t.Fatalf("a missing session: %v %v", ok, err)
	}
	if err := a.Save(ctx, sid, []byte("user_id=7"), time.Minute); err != nil {
		t.Fatal(err)
	}
	got, ok, err := b.Load(ctx, sid)
	if err != nil || !ok || string(got) != "user_id=7" {
		t.Fatalf("the other instance reads %q %v %v", got, ok, err)
	}
	if err := b.Save(ctx, sid, []byte("user_id=8"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := a.Load(ctx, sid); string(got) != "user_id=8" {
		t.Fatalf("after the other's save: %q", got)
	}
	if err := a.Delete(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.Load(ctx, sid); ok || err != nil {
		t.Fatalf("after delete: %v %v", ok, err)
	}
	if err := a.Delete(ctx, sid); err != nil {
		t.Fatalf("deleting a missing session: %v", err)
	}
}

func TestSessionExpires(t *testing.T) {
	_, js := server(t, t.TempDir(), 1)
	s := openSessions(t, js[0])
	ctx := context.Background()
	if err := s.Save(ctx, sid, []byte("x"), 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Load(ctx, sid); !ok {
		t.Fatal("gone at once")
	}
	testutil.WaitFor(t, 5*time.Second, "the session to expire after its ttl", func() bool {
		_, ok, err := s.Load(ctx, sid)
		if err != nil {
			t.Fatalf("after its ttl: %v", err)
		}
		return !ok
	})
}

func TestSessionsRefuseBadInput(t *testing.T) {
	_, js := server(t, t.TempDir(), 1)
	s := openSessions(t, js[0])
	ctx := context.Background()
	for _, id := range []string{"", "a.b", "a b", "a>", "../x", strings.Repeat("a", 300)} {
		if err := s.Save(ctx, id, []byte("x"), time.Minute); err == nil {
			t.Errorf("Save(%q) accepted", id)
		}
		if _, ok, err := s.Load(ctx, id); ok || err != nil {
			t.Errorf("Load(%q) = %v %v", id, ok, err)
		}
	}
	for _, ttl := range []time.Duration{0, -time.Second, 2 * time.Hour} {
		if err := s.Save(ctx, sid, []byte("x"), ttl); err == nil || !strings.HasPrefix(err.Error(), "zealgo: natskv: ") {
			t.Errorf("Save with ttl %v: %v", ttl, err)
		}
	}
}

func TestSessionsSurviveServerRestart(t *testing.T) {
	dir := t.TempDir()
	srv, js := server(t, dir, 1)
	ctx := context.Background()
	if err := openSessions(t, js[0]).Save(ctx, sid, []byte("kept"), time.Minute); err != nil {
		t.Fatal(err)
	}
	srv.Shutdown()
	_, js = server(t, dir, 1)
	got, ok, err := openSessions(t, js[0]).Load(ctx, sid)
	if !ok || err != nil || string(got) != "kept" {
		t.Fatalf("after restart: %q %v %v", got, ok, err)
	}
}

func openCounter(t *testing.T, js jetstream.JetStream, now func() time.Time) *Counter {
	t.Helper()
	c, err := OpenCounter(context.Background(), js, CounterConfig{MaxWindow: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c.now = now
	return c
}

func TestCounterCountsPerKeyAndWindow(t *testing.T) {
	_, js := server(t, t.TempDir(), 1)
	clock := time.Unix(1_700_000_040, 0) // on a minute boundary
	c := openCounter(t, js[0], func() time.Time { return clock })
	ctx := context.Background()
	incr := func(key string, want int64) {
		t.Helper()
		if n, err := c.Incr(ctx, key, time.Minute); err != nil || n != want {
			t.Fatalf("Incr(%q) = %d, %v; want %d", key, n, err, want)
		}
	}
	incr("127.0.0.1", 1)
	incr("127.0.0.1", 2)
	incr("::1", 1)
	incr("", 1)
	clock = clock.Add(59 * time.Second)
	incr("127.0.0.1", 3)
	clock = clock.Add(time.Second) // the next window
	incr("127.0.0.1", 1)
	if _, err := c.Incr(ctx, "x", 2*time.Minute); err == nil {
		t.Error("a window over MaxWindow accepted")
	}
	if _, err := c.Incr(ctx, strings.Repeat("x", 300), time.Minute); err == nil {
		t.Error("a key of 300 bytes accepted")
	}
}

func TestCounterCountsEveryConcurrentIncrement(t *testing.T) {
	_, js := server(t, t.TempDir(), 4)
	clock := time.Unix(1_700_000_000, 0)
	ctx := context.Background()
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for _, j := range js {
		c := openCounter(t, j, func() time.Time { return clock })
		for range 5 {
			wg.Go(func() {
				for range 10 {
					n, err := c.Incr(ctx, "login:alice", time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					seen[n]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	for n := int64(1); n <= 200; n++ {
		if seen[n] != 1 {
			t.Fatalf("count %d returned %d times; want each of 1..200 once", n, seen[n])
		}
	}
}

// TestReserveAdmitsAtMostLimitAtOnce: 40 concurrent reservations of one
// key from four connections: exactly limit are counted, the others told
// to wait until the first leaves the rolling window; a release frees one
// place, and the window rolls rather than resets.
func TestReserveAdmitsAtMostLimitAtOnce(t *testing.T) {
	_, js := server(t, t.TempDir(), 4)
	var mu sync.Mutex
	clock := time.Unix(1_700_000_030, 0) // mid-minute: a fixed window would end in 30 s
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	ctx := context.Background()
	var (
		wg      sync.WaitGroup
		tickets []int64
		waits   []time.Duration
	)
	counters := make([]*Counter, len(js))
	for i, j := range js {
		counters[i] = openCounter(t, j, now)
		for range 10 {
			wg.Go(func() {
				ticket, wait, err := counters[i].Reserve(ctx, "login\x00addr:203.0.113.9", 5, time.Minute)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Error(err)
				case ticket != 0:
					tickets = append(tickets, ticket)
				default:
					waits = append(waits, wait)
				}
			})
		}
	}
	wg.Wait()
	if len(tickets) != 5 || len(waits) != 35 || waits[0] != time.Minute {
		t.Fatalf("%d admitted, %d refused (first wait %v); want 5 and 35, 1m0s", len(tickets), len(waits), waits)
	}
	c := counters[0]
	reserve := func(what string, admitted bool) {
		t.Helper()
		ticket, wait, err := c.Reserve(ctx, "login\x00addr:203.0.113.9", 5, time.Minute)
		if err != nil || (ticket != 0) != admitted {
			t.Fatalf("%s: ticket %d wait %v err %v; admitted want %v", what, ticket, wait, err, admitted)
		}
	}
	if err := c.Release(ctx, "login\x00addr:203.0.113.9", tickets[2]); err != nil {
		t.Fatal(err)
	}
	reserve("after a release", true)
	reserve("full again", false)
	mu.Lock()
	clock = clock.Add(59 * time.Second) // past the fixed minute, within the rolling one
	mu.Unlock()
	reserve("59 s later", false)
	mu.Lock()
	clock = clock.Add(time.Second)
	mu.Unlock()
	reserve("a minute later", true)
	if err := c.Forget(ctx, "login\x00addr:203.0.113.9"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		reserve(fmt.Sprintf("after Forget, %d", i+1), true)
	}
}
