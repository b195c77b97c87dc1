package jstask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// TestDeadRetrySpreadsOverTaskStreams: tasks given up on three task
// streams, retried through dead letters opened without a number of
// streams (as zealgo tasks opens them), go back to the task streams as
// dispatch sends them: those without a key to each stream in turn, a
// keyed one to its key's stream.
func TestDeadRetrySpreadsOverTaskStreams(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	cfg := Config{Prefix: "redo", Streams: 3}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(ctx, f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := NewWorker(ctx, f.conn.JS, WorkerConfig{Config: cfg, PollWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(wctx, func(context.Context, Task, int) (json.RawMessage, error) { return nil, errors.New("boom") })
	}()
	var ids []int64
	for range 6 {
		ids = append(ids, dispatch(t, c, "/task/fails", `[]`))
	}
	key := ""
	for i := 0; key == "" || c.home(Task{Key: key}) != 2; i++ {
		key = fmt.Sprint("k", i)
	}
	keyed := dispatchKeyed(t, c, key)
	o.wait(t, 20*time.Second, append(ids, keyed)...)
	stop()
	<-done
	d, err := OpenDead(ctx, f.conn.JS, Config{Prefix: "redo"})
	if err != nil {
		t.Fatal(err)
	}
	again := map[int64]bool{}
	for _, id := range ids {
		n, err := d.Retry(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		again[n] = true
	}
	keyedAgain, err := d.Retry(ctx, keyed)
	if err != nil {
		t.Fatal(err)
	}
	where := map[int64]int{} // the task stream of each retried task
	for i := range 3 {
		name, _ := c.n.taskStream(i)
		st, err := f.conn.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info := st.CachedInfo().State
		for seq := info.FirstSeq; seq <= info.LastSeq && info.Msgs > 0; seq++ {
			if m, err := st.GetMsg(ctx, seq); err == nil {
				id, _ := strconv.ParseInt(m.Header.Get(hdrID), 10, 64)
				where[id] = i
			}
		}
	}
	perStream := map[int]int{}
	for id := range again {
		s, ok := where[id]
		if !ok {
			t.Fatalf("retried task %d is in no task stream", id)
		}
		perStream[s]++
	}
	if perStream[0] != 2 || perStream[1] != 2 || perStream[2] != 2 {
		t.Errorf("6 retried tasks by task stream: %v, want 2 on each", perStream)
	}
	if s, ok := where[keyedAgain]; !ok || s != 2 {
		t.Errorf("retried keyed task in stream %d (%v), want its key's stream 2", s, ok)
	}
}
