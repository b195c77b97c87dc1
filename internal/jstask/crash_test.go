package jstask

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// TestMarkCrashCoversEveryTaskStream: after a crash, MarkCrash, given no
// number of streams (as the host calls it), records for each of three
// task streams the tasks its workers' consumer may have delivered (its
// share of MaxInFlight after the last delivery it remembers), and the
// workers show exactly those tasks' first runs as second deliveries,
// stream by stream.
func TestMarkCrashCoversEveryTaskStream(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	cfg := Config{Prefix: "crash", Streams: 3, MaxInFlight: 6} // 2 in flight per stream
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(ctx, f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := NewWorker(ctx, f.conn.JS, WorkerConfig{Config: cfg}); err != nil { // the consumers
		t.Fatal(err)
	}
	// 1 task on the first stream, 3 on each of the others.
	var ids []int64
	k := 0
	for stream, count := range []int{1, 3, 3} {
		for range count {
			key := ""
			for key == "" || c.home(Task{Key: key}) != stream {
				key = fmt.Sprint("k", k)
				k++
			}
			ids = append(ids, dispatchKeyed(t, c, key))
		}
	}
	if err := MarkCrash(ctx, f.conn.JS, Config{Prefix: "crash", MaxInFlight: 6}); err != nil {
		t.Fatal(err)
	}
	want := map[int64]int{} // the first run's delivery, by task id
	for i := range 3 {
		name, _ := c.n.taskStream(i)
		st, err := f.conn.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for seq := uint64(1); seq <= st.CachedInfo().State.LastSeq; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			id, _ := strconv.ParseInt(m.Header.Get(hdrID), 10, 64)
			want[id] = map[bool]int{true: 2, false: 1}[seq <= 2]
		}
	}
	d := &deliveries{seen: map[int64][]int{}}
	inProcessWorker(t, f, c.cfg, d)
	o.wait(t, 20*time.Second, ids...)
	for _, id := range ids {
		if got := d.of(id); len(got) != 1 || got[0] != want[id] {
			t.Errorf("task %d ran with deliveries %v, want [%d]", id, got, want[id])
		}
	}
	// A range recorded before there were several streams (no stream in
	// its key) is one of the first stream.
	kv, err := f.conn.JS.KeyValue(ctx, c.n.runs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, maybePrefix+"40", []byte("41")); err != nil {
		t.Fatal(err)
	}
	r := watchMaybe(ctx, kv)
	defer r.stop()
	first, _ := c.n.taskStream(0)
	second, _ := c.n.taskStream(1)
	if !r.has(first, 41) || r.has(second, 41) || !r.has(second, 2) || r.has(second, 3) {
		t.Errorf("ranges %v: want 40-41 of %s and 1-2 of %s", r.ranges, first, second)
	}
}

// dispatchKeyed dispatches a task with key.
func dispatchKeyed(t *testing.T, c *Client, key string) int64 {
	t.Helper()
	id, err := c.Dispatch(context.Background(), Task{Handler: "/task/keyed", Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return id
}
