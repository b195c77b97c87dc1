package jstask

import (
	"context"
	"testing"
	"time"
)

// TestResultsSpreadOverResultStreams: with three results streams, each
// task's result goes to the stream of its id, every stream takes some,
// and each task finishes once; a second result of a finished task (a
// second run), published without a message id as workers do, is refused
// by its stream and not handed over, not even to the instance restarted.
func TestResultsSpreadOverResultStreams(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := Config{Prefix: "res", Streams: 3, ResultStreams: 3, AckWait: 5 * time.Second}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	d := &deliveries{seen: map[int64][]int{}}
	inProcessWorker(t, f, c.cfg, d)
	var ids []int64
	for range 12 {
		ids = append(ids, dispatch(t, c, "/task/plain", `[]`))
	}
	o.wait(t, 20*time.Second, ids...)
	total := uint64(0)
	for i := range 3 {
		name, _ := c.n.resultStream(i)
		st, err := f.conn.JS.Stream(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		n := st.CachedInfo().State.Msgs
		if n == 0 {
			t.Errorf("results stream %s took no result", name)
		}
		total += n
	}
	if total != 12 {
		t.Errorf("the results streams hold %d results, want 12", total)
	}
	first := Task{ID: ids[0], Handler: "/task/plain", Instance: "i1", Results: int(ids[0] % 3)}
	second := resultMsg(c.n, first, []byte(`"again"`), nil, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := f.conn.JS.PublishMsg(ctx, second); err == nil {
		t.Errorf("a second result of task %d was stored", ids[0])
	}
	c.Close()
	c2, err := Open(context.Background(), f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	last := dispatch(t, c2, "/task/plain", `[]`)
	o.wait(t, 20*time.Second, last)
	o.once(t, append(ids, last)...)
}
