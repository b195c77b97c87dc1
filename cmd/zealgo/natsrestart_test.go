package main

// serve with its default, embedded NATS server, killed with SIGKILL under
// load and started again on the same data directory.

import (
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// TestEmbeddedNATSRestartedUnderLoad: one instance with the embedded NATS
// server (serve's default, fsync always) and two workers; a logged-in
// client dispatches tasks with idempotency keys, retrying on errors, while
// the whole process (supervisor, embedded server, serving process and
// workers) is killed with SIGKILL and started again on the same data
// directory. Every task the client got an id for runs and finishes, none
// fails, none runs twice without TaskInfo.Delivery showing it, and the
// client stays logged in (sessions in the embedded server's key-value).
// The server forgets the deliveries of its last ~100ms (its consumers'
// state is not synced): the restarted one reports the tasks it may have
// delivered then as delivered again (jstask.MarkCrash).
func TestEmbeddedNATSRestartedUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	// Not in parallel: the tests beside it slow the workers, which then
	// sometimes held no task at the kill, and no rerun was there to see.
	// Each run takes 10 ms after its log line, so that the workers hold
	// tasks at the kill (with a task of no time at all they sometimes
	// held none, and no rerun was there to see).
	app := maps.Clone(keyedApp)
	app["task/work.go"] = strings.Replace(strings.Replace(keyedApp["task/work.go"], "\t\"fmt\"\n", "\t\"fmt\"\n\t\"time\"\n", 1),
		"ti.Delivery))\n", "ti.Delivery))\n\ttime.Sleep(10 * time.Millisecond)\n", 1)
	if app["task/work.go"] == keyedApp["task/work.go"] {
		t.Fatal("the slower task file was not made")
	}
	root, data, addr := testutil.WriteTree(t, app), t.TempDir(), testutil.FreeAddr(t)
	env := []string{"ZEALGO_SESSION_SECRET=" + strings.Repeat("e", 40)}
	args := []string{"serve", "--root", root, "--addr", addr, "--data", data, "--session-store", "nats",
		"--task-workers", "2", "--task-ack-wait", "2s"}
	first := start(t, addr, env, args...)
	first.waitHTTP(t)
	if !strings.Contains(first.logs.String(), "embedded at nats://127.0.0.1:") {
		t.Fatalf("serve did not embed NATS:\n%s", first.logs)
	}
	kc := loggedInClient(t, addr)
	const total = 2000
	second := make(chan *process, 1)
	go func() { // killed mid-load and started again at once
		testutil.Poll(60*time.Second, func() bool { return kc.accepted.Load() >= total/3 })
		t.Logf("killing serve and its embedded NATS server after %d tasks", kc.accepted.Load())
		first.kill()
		second <- start(t, addr, env, args...)
	}()
	kc.run(t, total, 8)
	if kc.broken.Load() {
		t.FailNow()
	}
	p := <-second
	logs := func() string { return first.logs.String() + p.logs.String() }
	// A task ran when its log line or its end is seen: the kill may take
	// the line of a task whose end was already stored, and a restart then
	// hands the end over without running the task again.
	missing := func() []int {
		runs, ends := ranOK(t, logs()), endedOK(logs())
		var m []int
		for n := range total {
			if _, ok := runs[n]; !ok && !ends[n] {
				m = append(m, n)
			}
		}
		return m
	}
	if !testutil.Poll(90*time.Second, func() bool { return len(missing()) == 0 }) {
		m := missing()
		t.Fatalf("%d acknowledged tasks never ran: %v", len(m), m[:min(len(m), 20)])
	}
	runs := ranOK(t, logs())
	kc.checkRuns(t, runs, total)
	// Every run's end reaches the finish callback of the instance (the
	// restarted one for the runs of the ends the first did not read).
	var ok, failed map[int64]int
	testutil.WaitForEvery(t, 30*time.Second, logPoll, "the finish callback to see every task's end", func() bool {
		ok, failed = finishes(first.logs.String(), p.logs.String())
		return len(ok)+len(failed) >= total
	})
	if len(failed) > 0 {
		t.Errorf("%d tasks failed: %v", len(failed), failed)
	}
	t.Logf("%d tasks acknowledged, %d ran, %d ends; %d client retries; %d reruns seen (Delivery > 1)",
		kc.accepted.Load(), len(runs), len(ok)+len(failed), kc.retried.Load(), reruns(logs()))
	if reruns(logs()) == 0 {
		t.Error("no task ran again after the restart: the workers held none at the kill")
	}
}

// endedRE matches the finish callback's log line of a task of keyedApp
// that ended well, with its number n.
var endedRE = regexp.MustCompile(`msg="task finished" [^\n]*?\\"n\\":(\d+)`)

// endedOK returns the numbers of the tasks whose end reached a finish
// callback, from the log.
func endedOK(logs string) map[int]bool {
	ends := map[int]bool{}
	for _, m := range endedRE.FindAllStringSubmatch(logs, -1) {
		n, _ := strconv.Atoi(m[1])
		ends[n] = true
	}
	return ends
}
