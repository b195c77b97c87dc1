package jstask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zealgo/zealgo/internal/testutil"
)

// TestQueuedTasksSurviveServerKill: a server process with tasks queued
// is killed; restarted on the same data directory, its tasks run, and
// the dispatcher, still connected, gets their results.
func TestQueuedTasksSurviveServerKill(t *testing.T) {
	dir, mark := t.TempDir(), t.TempDir()
	addr := testutil.FreeAddr(t)
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	srvEnv := []string{"JSTASK_DIR=" + dir, "JSTASK_PORT=" + port}
	srv := startProc(t, "server", srvEnv...)
	url := "nats://" + addr
	f := &fixture{t: t, url: url, mark: mark, conn: connect(t, url)}
	c, o := f.client("a")
	var ids []int64
	for i := range 10 {
		ids = append(ids, dispatch(t, c, "/task/echo", fmt.Sprintf("[%d]", i)))
	}
	srv.kill()
	startProc(t, "server", srvEnv...)
	f.worker("JSTASK_CONC=4")
	got := o.wait(t, 20*time.Second, ids...)
	for i, id := range ids {
		if got[id].err != nil || !strings.Contains(string(got[id].result), fmt.Sprintf(`"args":[%d]`, i)) {
			t.Errorf("task %d: %s %v", id, got[id].result, got[id].err)
		}
	}
	after := dispatch(t, c, "/task/echo", `["after"]`)
	o.wait(t, 10*time.Second, after)
	o.once(t, append(ids, after)...)
}

// TestResultsWaitForTheirDispatcher: a dispatcher process is killed
// after dispatching; its tasks run meanwhile; the dispatcher restarted
// under the same instance name gets every result, once.
func TestResultsWaitForTheirDispatcher(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	env := []string{"JSTASK_URL=" + f.url, "JSTASK_INSTANCE=d1"}
	d := startProc(t, "dispatcher", append(env, "JSTASK_DISPATCH=5")...)
	d.kill()
	dispatched := map[int64]bool{}
	for _, l := range d.outLines("dispatched ") {
		n, _ := strconv.ParseInt(strings.TrimPrefix(l, "dispatched "), 10, 64)
		dispatched[n] = true
	}
	if len(dispatched) != 5 {
		t.Fatalf("dispatched %v, want 5 tasks", dispatched)
	}
	f.worker("JSTASK_CONC=5")
	results, err := f.conn.JS.Stream(context.Background(), "ZEALGO_RESULTS")
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 15*time.Second, "5 stored results", func() bool {
		info, err := results.Info(context.Background())
		return err == nil && info.State.Msgs == 5
	})
	d2 := startProc(t, "dispatcher", env...)
	testutil.WaitFor(t, 10*time.Second, "5 results", func() bool { return len(d2.outLines("finish ")) >= 5 })
	settled(t, f.conn.JS) // nothing comes again
	d2.stop(t)
	finished := map[int64]int{}
	for _, l := range d2.outLines("finish ") {
		fields := strings.SplitN(l, " ", 3)
		id, _ := strconv.ParseInt(fields[1], 10, 64)
		var res map[string]any
		if err := json.Unmarshal([]byte(fields[2]), &res); err != nil || res["deliveries"] != 1.0 {
			t.Errorf("line %q", l)
		}
		finished[id]++
	}
	if len(finished) != 5 {
		t.Errorf("finished %v, want the 5 dispatched tasks", finished)
	}
	for id := range dispatched {
		if finished[id] != 1 {
			t.Errorf("task %d finished %d times in the restarted dispatcher", id, finished[id])
		}
	}
}

// TestThousandTasksWithAWorkerKilledMidLoad: two workers share 1,000
// tasks; one is killed mid-load and another takes its place. Every task
// finishes exactly once.
func TestThousandTasksWithAWorkerKilledMidLoad(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, o := f.client("a")
	w1 := f.worker("JSTASK_CONC=8")
	f.worker("JSTASK_CONC=8")
	ids := dispatchMany(t, c, 1000, "/task/sleep", `[20]`)
	testutil.WaitFor(t, 20*time.Second, "200 results", func() bool { return o.total() >= 200 })
	w1.kill()
	f.worker("JSTASK_CONC=8")
	again := o.succeeded(t, 30*time.Second, ids...)
	t.Logf("%d tasks delivered again after the kill", again)
	o.once(t, ids...)
}

// TestServerThatLostItsDataIsNotSilentlySetUpAgain: the server comes
// back with an empty data directory (its streams are gone); a dispatch
// fails with ErrStreamLost saying what to do, and creates nothing; a
// restart (Open) creates the streams again, with ids beyond the lost ones.
func TestServerThatLostItsDataIsNotSilentlySetUpAgain(t *testing.T) {
	addr := testutil.FreeAddr(t)
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	srv := startProc(t, "server", "JSTASK_DIR="+t.TempDir(), "JSTASK_PORT="+port)
	url := "nats://" + addr
	f := &fixture{t: t, url: url, mark: t.TempDir(), conn: connect(t, url)}
	c, o := f.client("a")
	f.worker()
	first := dispatch(t, c, "/task/echo", `[1]`)
	o.wait(t, 10*time.Second, first)
	srv.kill()
	startProc(t, "server", "JSTASK_DIR="+t.TempDir(), "JSTASK_PORT="+port)
	var err error
	testutil.WaitFor(t, 10*time.Second, "a dispatch to fail with ErrStreamLost", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err = c.Dispatch(ctx, Task{Handler: "/task/echo", Args: json.RawMessage(`[2]`)})
		return errors.Is(err, ErrStreamLost)
	})
	if !strings.Contains(err.Error(), "restart zealgo") {
		t.Errorf("the error says not what to do: %v", err)
	}
	if _, err := f.conn.JS.Stream(context.Background(), "ZEALGO_TASKS"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("the task stream was created again behind the user's back: %v", err)
	}
	c2, o2 := f.client("a2") // a restart
	second := dispatch(t, c2, "/task/echo", `[2]`)
	if second <= first {
		t.Errorf("a new block after the data loss starts at %d, want more than %d", second, first)
	}
	got := o2.wait(t, 20*time.Second, second)
	if got[second].err != nil {
		t.Fatal(got[second].err)
	}
}

// succeeded waits for the outcomes of ids, fails the test at the first
// error, and returns how many of the results were of a later delivery
// than the first (the sleep task's "deliveries").
func (o *outcomes) succeeded(t *testing.T, within time.Duration, ids ...int64) (again int) {
	t.Helper()
	got := o.wait(t, within, ids...)
	for _, id := range ids {
		if got[id].err != nil {
			t.Fatalf("task %d: %v", id, got[id].err)
		}
		if decode(t, got[id].result)["deliveries"] != 1.0 {
			again++
		}
	}
	return again
}
