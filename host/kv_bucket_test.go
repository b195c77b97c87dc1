package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/testutil"
)

// checkBucketTTL: a bucket opened with BucketTTL drops every key a
// second after its last write, whoever opens it next; opening it again
// with another time to live is an error that says so.
func checkBucketTTL(t *testing.T, a, b *host.App) {
	ctx := context.Background()
	cache := a.KV("cache", host.BucketTTL(time.Second))
	if _, err := cache.Put(ctx, "page", "<html>"); err != nil {
		t.Fatal(err)
	}
	if n, err := cache.Incr(ctx, "hits", 1); err != nil || n != 1 {
		t.Fatalf("Incr: %d %v", n, err)
	}
	if e, err := b.KV("cache").Get(ctx, "page"); err != nil || e.Value != "<html>" {
		t.Fatalf("before expiry: %+v %v", e, err)
	}
	testutil.WaitFor(t, 10*time.Second, "the bucket's keys to expire", func() bool {
		_, err1 := b.KV("cache").Get(ctx, "page")
		_, err2 := a.KV("cache").Get(ctx, "hits")
		return errors.Is(err1, host.ErrKVNotFound) && errors.Is(err2, host.ErrKVNotFound)
	})
	if _, err := a.KV("cache", host.BucketTTL(time.Hour)).Get(ctx, "page"); err == nil || !strings.Contains(err.Error(), "give the same everywhere") {
		t.Errorf("another time to live: %v", err)
	}
	if _, err := a.KV("short", host.BucketTTL(time.Millisecond)).Put(ctx, "k", "v"); err == nil || !strings.Contains(err.Error(), "at least 1s") {
		t.Errorf("a time to live under a second: %v", err)
	}
}

// TestKVBucketTTLLocal: without NATS, a bucket's time to live holds.
func TestKVBucketTTLLocal(t *testing.T) {
	ta := newTestApp(t, kvFiles)
	checkBucketTTL(t, ta.app, ta.app)
}

// TestKVBucketTTLNATS: on NATS the time to live is the JetStream
// bucket's, shared by the instances; an instance opening the bucket
// without BucketTTL keeps it.
func TestKVBucketTTLNATS(t *testing.T) {
	t.Parallel()
	url := sharedNATS(t)
	a := newTestApp(t, kvFiles, natsOpts(url))
	b := newTestApp(t, kvFiles, natsOpts(url))
	checkBucketTTL(t, a.app, b.app)
	conn, err := natsrv.Connect(context.Background(), url, natsrv.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	kv, err := conn.JS.KeyValue(context.Background(), "zealgo_kv_cache")
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(context.Background())
	if err != nil || st.TTL() != time.Second {
		t.Fatalf("the JetStream bucket's TTL: %v %v, want 1s", st, err)
	}
	c := newTestApp(t, kvFiles, natsOpts(url)) // opens it without BucketTTL
	if _, err := c.app.KV("cache").Put(context.Background(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	if st, err := kv.Status(context.Background()); err != nil || st.TTL() != time.Second {
		t.Fatalf("after an open without BucketTTL: %v %v, want 1s kept", st, err)
	}
}

// TestKVBucketDeletedWhileServing: a bucket deleted on the NATS server
// (nats kv del) while the application has it open gives ErrKVBucketLost
// saying what to do, and is not created again behind its back.
func TestKVBucketDeletedWhileServing(t *testing.T) {
	url := sharedNATS(t)
	a := newTestApp(t, kvFiles, natsOpts(url))
	ctx := context.Background()
	if _, err := a.app.KV("carts").Put(ctx, "ada", "1 book"); err != nil {
		t.Fatal(err)
	}
	conn, err := natsrv.Connect(ctx, url, natsrv.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.JS.DeleteKeyValue(ctx, "zealgo_kv_carts"); err != nil {
		t.Fatal(err)
	}
	for _, op := range []func() error{
		func() error { _, err := a.app.KV("carts").Get(ctx, "ada"); return err },
		func() error { _, err := a.app.KV("carts").Put(ctx, "ada", "2 books"); return err },
		func() error { _, err := a.app.KV("carts").Create(ctx, "bob", "1 pen"); return err },
		func() error { return a.app.KV("carts").Delete(ctx, "ada") },
	} {
		err := op()
		if !errors.Is(err, host.ErrKVBucketLost) || !strings.Contains(err.Error(), "restart zealgo") {
			t.Errorf("after the deletion: %v, want ErrKVBucketLost saying what to do", err)
		}
	}
	if _, err := conn.JS.KeyValue(ctx, "zealgo_kv_carts"); err == nil {
		t.Error("the bucket was created again behind the application's back")
	}
}
