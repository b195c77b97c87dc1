package host

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestMemKVSweepsExpiredKeys: in the process, keys past their time to
// live that are never touched again leave memory: each operation drops
// some, so that a bucket written with new keys does not grow with dead
// ones. A key written again with a later expiry stays.
func TestMemKVSweepsExpiredKeys(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	m := newMemKV(time.Minute)
	m.now = func() time.Time { return now }
	ctx := context.Background()
	apply := func(op kvOp) {
		if _, err := m.apply(ctx, op); err != nil && op.Op != "get" {
			t.Fatal(err)
		}
	}
	for i := range 10_000 {
		apply(kvOp{Op: "put", Key: "session-" + strconv.Itoa(i), Value: "x"})
		if i%100 == 0 {
			now = now.Add(time.Second) // 100 s in all: the first 4,000 keys expire meanwhile
		}
	}
	if n := len(m.keys); n > 6_100 {
		t.Errorf("%d keys held after 10,000 writes of which 4,000 expired", n)
	}
	now = now.Add(2 * time.Minute)
	apply(kvOp{Op: "put", Key: "session-9999", Value: "again"})
	for range 200 { // the bucket is only read: the rest expire
		apply(kvOp{Op: "get", Key: "nothing"})
	}
	if len(m.keys) != 1 || len(m.expiry) != 1 {
		t.Fatalf("%d keys and %d expiries left, want the one key written again", len(m.keys), len(m.expiry))
	}
	if _, ok := m.keys["session-9999"]; !ok {
		t.Fatal("the key written again was dropped")
	}
}
