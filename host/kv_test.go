package host_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// kvFiles: a handler file that counts likes in a KV bucket and reads
// them back, and tasks that use KV, Publish and Broadcast from a worker.
var kvFiles = map[string]string{
	"api/likes.go": natsHead + `var post = func(api *host.API) any {
	n, err := api.App().KV("likes").Incr(api.Context(), "post-"+api.String("id"), 1)
	if err != nil {
		return err
	}
	return map[string]any{"likes": n}
}

var get = func(api *host.API) any {
	e, err := api.App().KV("likes").Get(api.Context(), "post-"+api.String("id"))
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return map[string]any{"likes": e.Value, "revision": e.Revision}
}
`,
	"task/tally.go": taskFile("tally", `"context"
	"github.com/zealgo/zealgo/host"`, `func(ctx context.Context, app *host.App, key string) any {
	n, err := app.KV("jobs").Incr(ctx, key, 1)
	if err != nil {
		return "incr: " + err.Error()
	}
	if _, err := app.KV("jobs").Create(ctx, key, "again"); err != host.ErrKVExists {
		return "create: " + err.Error()
	}
	if err := app.Publish("jobs.done", key); err != nil {
		return "publish: " + err.Error()
	}
	return n
}`),
	"api/room.go":      roomFiles["api/room.go"],
	"task/announce.go": roomFiles["task/announce.go"],
}

// sharedNATS starts a NATS server for two instances and returns its URL
// with the token.
func sharedNATS(tb testing.TB) string {
	tb.Helper()
	return benchNATS(tb, "")
}

// checkKV runs the KV contract on a and b, two apps that share their
// state (b may be a): compare-and-set, counters under concurrency from
// both, deletion, time to live, bad names.
func checkKV(t *testing.T, a, b *host.App) {
	ctx := context.Background()
	ka, kb := a.KV("carts"), b.KV("carts")
	rev, err := ka.Create(ctx, "ada", "1 book")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kb.Create(ctx, "ada", "2 books"); !errors.Is(err, host.ErrKVExists) {
		t.Fatalf("second Create: %v, want ErrKVExists", err)
	}
	e, err := kb.Get(ctx, "ada")
	if err != nil || e.Value != "1 book" || e.Revision != rev {
		t.Fatalf("Get on the other: %+v %v (revision %d)", e, err, rev)
	}
	rev2, err := kb.Update(ctx, "ada", "2 books", rev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ka.Update(ctx, "ada", "3 books", rev); !errors.Is(err, host.ErrKVConflict) {
		t.Fatalf("stale Update: %v, want ErrKVConflict", err)
	}
	if ok, err := ka.CompareAndSwap(ctx, "ada", "1 book", "x"); ok || err != nil {
		t.Fatalf("CompareAndSwap from a stale value: %v %v", ok, err)
	}
	if ok, err := ka.CompareAndSwap(ctx, "ada", "2 books", "4 books"); !ok || err != nil {
		t.Fatalf("CompareAndSwap: %v %v", ok, err)
	}
	if e, _ := kb.Get(ctx, "ada"); e.Value != "4 books" || e.Revision <= rev2 {
		t.Fatalf("after the swap: %+v", e)
	}
	if err := kb.Delete(ctx, "ada"); err != nil {
		t.Fatal(err)
	}
	if _, err := ka.Get(ctx, "ada"); !errors.Is(err, host.ErrKVNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := ka.Delete(ctx, "nobody"); err != nil {
		t.Fatalf("Delete of a missing key: %v", err)
	}
	checkKVCounter(t, a, b)
	checkKVTTL(t, a, b)
	if _, err := a.KV("no spaces").Get(ctx, "k"); err == nil || !strings.Contains(err.Error(), `kv bucket "no spaces"`) {
		t.Errorf("bad bucket: %v", err)
	}
	if _, err := ka.Put(ctx, "a b", "v"); err == nil || !strings.Contains(err.Error(), `key "a b"`) {
		t.Errorf("bad key: %v", err)
	}
	if _, err := ka.WithTTL(time.Millisecond).Put(ctx, "k", "v"); err == nil || !strings.Contains(err.Error(), "time to live") {
		t.Errorf("ttl under a second: %v", err)
	}
}

// checkKVCounter: 2×100 concurrent increments from a and b count 200.
func checkKVCounter(t *testing.T, a, b *host.App) {
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for _, app := range []*host.App{a, b} {
		for range 4 {
			wg.Go(func() {
				for range 25 {
					if _, err := app.KV("hits").Incr(context.Background(), "home", 1); err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if e, err := b.KV("hits").Get(context.Background(), "home"); err != nil || e.Value != "200" {
		t.Fatalf("counter after 200 increments: %+v %v", e, err)
	}
}

// checkKVTTL: a key written with a time to live is gone after it, on
// both; one written without stays.
func checkKVTTL(t *testing.T, a, b *host.App) {
	ctx := context.Background()
	short := a.KV("otp").WithTTL(time.Second)
	if _, err := short.Put(ctx, "ada", "123456"); err != nil {
		t.Fatal(err)
	}
	if n, err := short.Incr(ctx, "tries", 1); err != nil || n != 1 {
		t.Fatalf("Incr with a ttl: %d %v", n, err)
	}
	if _, err := a.KV("otp").Put(ctx, "keep", "1"); err != nil {
		t.Fatal(err)
	}
	if e, err := b.KV("otp").Get(ctx, "ada"); err != nil || e.Value != "123456" {
		t.Fatalf("before expiry: %+v %v", e, err)
	}
	testutil.WaitFor(t, 10*time.Second, "the keys with a ttl to expire", func() bool {
		_, err1 := b.KV("otp").Get(ctx, "ada")
		_, err2 := b.KV("otp").Get(ctx, "tries")
		return errors.Is(err1, host.ErrKVNotFound) && errors.Is(err2, host.ErrKVNotFound)
	})
	if _, err := b.KV("otp").Get(ctx, "keep"); err != nil {
		t.Fatalf("the key without a ttl: %v", err)
	}
	if _, err := short.Create(ctx, "ada", "654321"); err != nil {
		t.Fatalf("Create after expiry: %v", err)
	}
}

// TestKVLocal: without NATS the buckets live in the process, with the
// same semantics.
func TestKVLocal(t *testing.T) {
	ta := newTestApp(t, kvFiles)
	checkKV(t, ta.app, ta.app)
}

// TestKVNATSShared: two instances on one NATS server share their
// buckets; each bucket is a JetStream bucket.
func TestKVNATSShared(t *testing.T) {
	t.Parallel()
	url := sharedNATS(t)
	a := newTestApp(t, kvFiles, natsOpts(url))
	b := newTestApp(t, kvFiles, natsOpts(url))
	checkKV(t, a.app, b.app)
	for range 3 {
		do(t, nil, "POST", a.srv.URL+"/api/likes?id=7", nil)
	}
	if resp, body := do(t, nil, "GET", b.srv.URL+"/api/likes?id=7", nil); resp.StatusCode != 200 || !strings.Contains(body, `"likes":"3"`) {
		t.Fatalf("the other instance: %d %s", resp.StatusCode, body)
	}
}

// TestKVHandler: an interpreted handler file counts and reads through
// App.KV.
func TestKVHandler(t *testing.T) {
	ta := newTestApp(t, kvFiles)
	for i := 1; i <= 3; i++ {
		resp, body := do(t, nil, "POST", ta.srv.URL+"/api/likes?id=1", nil)
		if resp.StatusCode != 200 || body != `{"likes":`+strconv.Itoa(i)+`}` {
			t.Fatalf("POST %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if _, body := do(t, nil, "GET", ta.srv.URL+"/api/likes?id=2", nil); !strings.Contains(body, "key not found") {
		t.Fatalf("a missing key: %s", body)
	}
	if e, err := ta.app.KV("likes").Get(context.Background(), "post-1"); err != nil || e.Value != "3" {
		t.Fatalf("the server's view: %+v %v", e, err)
	}
}

// subscribe subscribes app to subject and returns the channel of what it
// receives.
func subscribe(t *testing.T, app *host.App, ctx context.Context, subject string) <-chan string {
	t.Helper()
	ch := make(chan string, 100)
	unsub, err := app.Subscribe(ctx, subject, func(msg string) { ch <- msg })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unsub)
	return ch
}

// receive waits for the next message on ch.
func receive(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10s")
		return ""
	}
}

// checkPubSub: a subscription of a receives what b publishes to its
// subjects, wildcards included, and nothing after unsubscribe.
func checkPubSub(t *testing.T, a, b *host.App) {
	orders := subscribe(t, a, context.Background(), "orders.*")
	all := subscribe(t, a, context.Background(), "orders.>")
	ctx, cancel := context.WithCancel(context.Background())
	scoped := subscribe(t, a, ctx, "orders.new")
	for _, s := range [][2]string{{"stock.new", "x"}, {"orders.new", "o1"}, {"orders.eu.new", "o2"}} {
		if err := b.Publish(s[0], s[1]); err != nil {
			t.Fatal(err)
		}
	}
	if m := receive(t, orders); m != "o1" {
		t.Fatalf("orders.*: %q", m)
	}
	if m1, m2 := receive(t, all), receive(t, all); m1+m2 != "o1o2" {
		t.Fatalf("orders.>: %q %q", m1, m2)
	}
	if m := receive(t, scoped); m != "o1" {
		t.Fatalf("orders.new: %q", m)
	}
	cancel() // the scoped subscription ends with its context
	if err := b.Publish("orders.new", "o3"); err != nil {
		t.Fatal(err)
	}
	if m := receive(t, orders); m != "o3" {
		t.Fatalf("orders.*: %q", m)
	}
	receive(t, all)
	select {
	case m := <-scoped:
		t.Fatalf("a subscription whose context is done received %q", m)
	default:
	}
	if err := b.Publish("orders.*", "x"); err == nil {
		t.Error("Publish to a wildcard: no error")
	}
	if _, err := a.Subscribe(context.Background(), "bad subject", func(string) {}); err == nil {
		t.Error("Subscribe to a bad subject: no error")
	}
}

// TestPubSubLocal: publish and subscribe in one process without NATS.
func TestPubSubLocal(t *testing.T) {
	ta := newTestApp(t, kvFiles)
	checkPubSub(t, ta.app, ta.app)
}

// TestPubSubAcrossInstances: what one instance publishes reaches the
// subscriptions of another on the same NATS.
func TestPubSubAcrossInstances(t *testing.T) {
	url := sharedNATS(t)
	a := newTestApp(t, kvFiles, natsOpts(url))
	b := newTestApp(t, kvFiles, natsOpts(url))
	checkPubSub(t, a.app, b.app)
}

// checkFromTask: a task counts in KV, publishes and broadcasts; the
// server sees the count, the message and the broadcast.
func checkFromTask(t *testing.T, ta *taskApp) {
	done := subscribe(t, ta.app, context.Background(), "jobs.done")
	for i := 1; i <= 2; i++ {
		f := ta.run(t, "/task/tally", "job-1")
		if f.err != nil || f.result != int64(i) {
			t.Fatalf("task %d: %v %v", i, f.result, f.err)
		}
		if m := receive(t, done); m != "job-1" {
			t.Fatalf("published %q", m)
		}
	}
	if e, err := ta.app.KV("jobs").Get(context.Background(), "job-1"); err != nil || e.Value != "2" {
		t.Fatalf("the server's view of the task's counter: %+v %v", e, err)
	}
	c := dialWS(t, ta.srv.URL, "/api/room?name=news", nil)
	readWS(t, c)
	if f := ta.run(t, "/task/announce", "news", "from the task"); f.err != nil || f.result != "sent" {
		t.Fatalf("broadcast task: %v %v", f.result, f.err)
	}
	if got := readWS(t, c); got != "from the task" {
		t.Fatalf("got %q", got)
	}
}

// TestSharedFromTaskLocal: without NATS, a task's KV, Publish and
// Broadcast go to the server through the worker's pipe.
func TestSharedFromTaskLocal(t *testing.T) {
	checkFromTask(t, newTaskApp(t, kvFiles, 1, true))
}

// TestSharedFromTaskNATS: on NATS, a task's worker uses it itself.
func TestSharedFromTaskNATS(t *testing.T) {
	t.Parallel()
	checkFromTask(t, newTaskApp(t, kvFiles, 1, true, natsOpts(host.NATSEmbedded)))
}
