package host_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// TestTaskCoroutine checks that one worker runs many tasks at once in
// coroutine mode, and one at a time without it. In coroutine mode every
// task waits until all have started, which only overlapping tasks can
// do; in serial mode no task ever sees another one running.
func TestTaskCoroutine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		coroutine   bool
		waitMs      int  // how long a task waits for the others to start
		wantPassed  bool // every task saw all start while it ran
		wantRunning int  // the most tasks seen running at once, over all tasks
	}{
		{"coroutine: all at once", true, 15000, true, 4},
		{"serial: one at a time", false, 150, false, 1},
	}
	const n = 4
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ta := newTaskApp(t, map[string]string{"task/overlap.go": taskOverlap}, 1, tt.coroutine)
			dir := t.TempDir()
			for _, d := range []string{"running", "started"} {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			ids := make([]int64, n)
			for i := range ids {
				id, err := ta.app.Server().Task(host.Task{Handler: "/task/overlap", Args: []any{dir, i, n, tt.waitMs}})
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = id
			}
			pids := map[int64]bool{}
			most, allPassed := int64(0), true
			for _, id := range ids {
				f := ta.sink.wait(t, id)
				m, _ := f.result.(map[string]any)
				if f.err != nil || m == nil {
					t.Fatalf("task %d: %v %v", id, f.result, f.err)
				}
				if tt.coroutine && m["passed"] != true {
					t.Errorf("task %d finished before all %d tasks started: %v", id, n, m)
				}
				allPassed = allPassed && m["passed"] == true
				most = max(most, m["running"].(int64))
				pids[m["pid"].(int64)] = true
			}
			if most != int64(tt.wantRunning) || allPassed != tt.wantPassed {
				t.Fatalf("at most %v tasks seen running at once, all saw every task start: %v; want %d, %v",
					most, allPassed, tt.wantRunning, tt.wantPassed)
			}
			if len(pids) != 1 {
				t.Fatalf("tasks ran in %d processes, want the one worker", len(pids))
			}
			t.Logf("%d tasks, coroutine %v: %v", n, tt.coroutine, time.Since(start))
		})
	}
}

// TestTaskPanic: a panicking task reports ErrTaskPanicked with the panic
// value, and the same worker process serves the next task.
func TestTaskPanic(t *testing.T) {
	t.Parallel()
	for _, coroutine := range []bool{true, false} {
		t.Run(fmt.Sprintf("coroutine=%v", coroutine), func(t *testing.T) {
			ta := newTaskApp(t, map[string]string{
				"task/pid.go":  taskPid,
				"task/boom.go": taskFile("boom", "", `func(what string) any { var m map[string]int; if what == "nil map" { m["x"] = 1 }; panic("boom: " + what) }`),
			}, 1, coroutine)
			before := ta.pidOf(t)
			for _, what := range []string{"a string", "nil map"} {
				f := ta.run(t, "/task/boom", what)
				want := "panic: boom: a string"
				if what == "nil map" {
					want = "assignment to entry in nil map"
				}
				if !errors.Is(f.err, host.ErrTaskPanicked) || !strings.Contains(f.err.Error(), want) {
					t.Fatalf("panic (%s): %v, want ErrTaskPanicked with %q", what, f.err, want)
				}
			}
			if after := ta.pidOf(t); after != before {
				t.Fatalf("worker changed from pid %d to %d after a panic", before, after)
			}
			if !strings.Contains(ta.logs.String(), "task panic") {
				t.Errorf("the panic is not in the server log:\n%s", ta.logs)
			}
		})
	}
}

// taskBlock marks itself started in dir and holds a connection to the
// listener named in dir/addr until blockDir's release closes it (or
// refuses it: a task that connects after the release returns at once).
var taskBlock = taskFile("block", `"fmt"
	"io"
	"net"
	"os"
	"path/filepath"`, `func(dir string, id int) any {
	addr, _ := os.ReadFile(filepath.Join(dir, "addr"))
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("started-%d", id)), nil, 0o644)
	if c, err := net.Dial("tcp", string(addr)); err == nil {
		io.Copy(io.Discard, c)
		c.Close()
	}
	return "released"
}`)

// blockDir returns a directory for taskBlock tasks and the func that
// releases them, which the test's cleanup also calls.
func blockDir(t *testing.T) (string, func()) {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "addr"), []byte(ln.Addr().String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	released := false
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if released {
				c.Close()
			} else {
				held = append(held, c)
			}
			mu.Unlock()
		}
	}()
	release := sync.OnceFunc(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		released = true
		for _, c := range held {
			c.Close()
		}
	})
	t.Cleanup(release)
	return dir, release
}

// waitStarted waits until the block tasks 0..n-1 have started.
func waitStarted(t *testing.T, dir string, n int) {
	t.Helper()
	testutil.WaitFor(t, 15*time.Second, "the tasks to start", func() bool {
		for i := 0; i < n; i++ {
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("started-%d", i))); err != nil {
				return false
			}
		}
		return true
	})
}

// TestTaskWorkerKilled kills a worker with SIGKILL while it runs two
// tasks: both reach the finish callback as failed, the worker is reaped
// and replaced, and the new one serves the next task.
func TestTaskWorkerKilled(t *testing.T) {
	t.Parallel()
	ta := newTaskApp(t, map[string]string{"task/pid.go": taskPid, "task/block.go": taskBlock}, 1, true)
	old := ta.pidOf(t)
	dir, _ := blockDir(t)
	var ids []int64
	for i := 0; i < 2; i++ {
		id, err := ta.app.Server().Task(host.Task{Handler: "/task/block", Args: []any{dir, i}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	waitStarted(t, dir, 2)
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		f := ta.sink.wait(t, id)
		if !errors.Is(f.err, host.ErrWorkerExited) || !strings.Contains(f.err.Error(), fmt.Sprintf("pid %d", old)) ||
			!strings.Contains(f.err.Error(), "killed") {
			t.Fatalf("task %d on the killed worker: %v %v; want ErrWorkerExited naming pid %d and the signal", id, f.result, f.err, old)
		}
	}
	testutil.WaitFor(t, 15*time.Second, "a new worker", func() bool {
		pids := ta.app.Server().TaskWorkerPIDs()
		return len(pids) == 1 && pids[0] != old
	})
	if !processGone(old) {
		t.Errorf("the killed worker %d was not reaped", old)
	}
	if now := ta.pidOf(t); now == old || now != ta.app.Server().TaskWorkerPIDs()[0] {
		t.Fatalf("next task ran in pid %d; old %d, workers %v", now, old, ta.app.Server().TaskWorkerPIDs())
	}
	if !strings.Contains(ta.logs.String(), "task worker exited; restarting it") {
		t.Errorf("no restart in the log:\n%s", ta.logs)
	}
}

// TestTaskReload edits a task file between two dispatches: once the
// worker has reloaded it, the next dispatch runs the new code, in the same
// worker process.
func TestTaskReload(t *testing.T) {
	version := func(v int) string {
		return taskFile("ver", `"os"`, fmt.Sprintf(`func() any { return map[string]any{"v": %d, "pid": os.Getpid()} }`, v))
	}
	ta := newTaskApp(t, map[string]string{"task/ver.go": version(1)}, 1, true)
	first := ta.run(t, "/task/ver")
	if m, _ := first.result.(map[string]any); first.err != nil || m["v"] != int64(1) {
		t.Fatalf("before the edit: %v %v", first.result, first.err)
	}
	if err := os.WriteFile(filepath.Join(ta.root, "task/ver.go"), []byte(version(2)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The worker logs the reload; its log reaches the server's.
	testutil.WaitFor(t, 10*time.Second, "the worker to reload task/ver.go", func() bool {
		return strings.Contains(ta.logs.String(), "msg=reloaded file=task/ver.go")
	})
	second := ta.run(t, "/task/ver")
	m, _ := second.result.(map[string]any)
	if second.err != nil || m["v"] != int64(2) {
		t.Fatalf("after the edit: %v %v", second.result, second.err)
	}
	if m["pid"] != first.result.(map[string]any)["pid"] {
		t.Fatalf("the worker was restarted (pid %v, then %v): a reload needs no restart", first.result, m["pid"])
	}
	// A broken edit is a load error for the next task, not a dead worker.
	if err := os.WriteFile(filepath.Join(ta.root, "task/ver.go"), []byte(taskFile("ver", "", "func() any { return nope }")), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the reload to fail", func() bool {
		return strings.Contains(ta.logs.String(), "msg=\"reload failed\" file=task/ver.go")
	})
	if f := ta.run(t, "/task/ver"); !errors.Is(f.err, host.ErrTaskLoad) || !strings.Contains(f.err.Error(), "task/ver.go:") {
		t.Fatalf("broken file: %v %v", f.result, f.err)
	}
}

// TestTaskResultNumbers: numbers in a task's result reach the finish
// callback as int64 when JSON writes them as integers, so that large ones
// keep every digit, and as float64 otherwise, at any depth.
func TestTaskResultNumbers(t *testing.T) {
	ta := newTaskApp(t, map[string]string{
		"task/big.go": taskFile("big", "", `func(which string) any {
	switch which {
	case "top":
		return 1 << 60
	case "over":
		return uint64(1<<64 - 1)
	}
	return map[string]any{
		"big":   1<<60 + 1,
		"neg":   -(1 << 62) - 3,
		"frac":  1.5,
		"whole": 2.0,
		"tiny":  1e-300,
		"list":  []any{1, 2.5, []int64{1<<53 + 1}},
		"inner": map[string]any{"n": int64(1<<63 - 1)},
	}
}`),
	}, 1, true)
	tests := []struct {
		which string
		want  any
	}{
		{"top", int64(1 << 60)},
		{"over", float64(1<<64 - 1)}, // over int64: a float64, as close as it gets
		{"nested", map[string]any{
			"big":   int64(1<<60 + 1),
			"neg":   int64(-(1 << 62) - 3),
			"frac":  1.5,
			"whole": int64(2), // JSON writes 2.0 as 2
			"tiny":  1e-300,
			"list":  []any{int64(1), 2.5, []any{int64(1<<53 + 1)}},
			"inner": map[string]any{"n": int64(1<<63 - 1)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.which, func(t *testing.T) {
			f := ta.run(t, "/task/big", tt.which)
			if f.err != nil || !reflect.DeepEqual(f.result, tt.want) {
				t.Fatalf("result %#v (%v), want %#v", f.result, f.err, tt.want)
			}
		})
	}
}

// taskHeld marks itself started in dir with its worker's pid and its
// delivery, and holds a connection to blockDir's listener until the
// release; it answers the pid and delivery that finished it.
var taskHeld = taskFile("held", `"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/zealgo/zealgo/host"`, `func(ti *host.TaskInfo, dir string, n int) any {
	addr, _ := os.ReadFile(filepath.Join(dir, "addr"))
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("started-%d-%d-%d", n, os.Getpid(), ti.Delivery)), nil, 0o644)
	if c, err := net.Dial("tcp", string(addr)); err == nil {
		io.Copy(io.Discard, c)
		c.Close()
	}
	return map[string]any{"pid": os.Getpid(), "delivery": ti.Delivery}
}`)

// startedBy returns, for each task of taskHeld in dir, the pids of the
// workers it started in.
func startedBy(t *testing.T, dir string) map[int][]int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][]int{}
	for _, e := range ents {
		var n, pid, delivery int
		if _, err := fmt.Sscanf(e.Name(), "started-%d-%d-%d", &n, &pid, &delivery); err == nil {
			out[n] = append(out[n], pid)
		}
	}
	return out
}

// TestTaskNATSWorkerKilled: on NATS, kill -9 of one of two task workers
// (not the server) while it holds tasks: the tasks it held run again, in
// a worker alive, and finish; the pool starts a new worker in its place
// (issue 30: the single worker's kill -9, measured).
func TestTaskNATSWorkerKilled(t *testing.T) {
	t.Parallel()
	ta := newTaskApp(t, map[string]string{"task/held.go": taskHeld}, 2, true, natsOpts(host.NATSEmbedded))
	dir, release := blockDir(t)
	const tasks = 6
	var ids []int64
	for i := range tasks {
		id, err := ta.app.Server().Task(host.Task{Handler: "/task/held", Args: []any{dir, i}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	testutil.WaitFor(t, 15*time.Second, "every task to start", func() bool { return len(startedBy(t, dir)) == tasks })
	victim := startedBy(t, dir)[0][0]
	var held []int
	for n, pids := range startedBy(t, dir) {
		if pids[0] == victim {
			held = append(held, n)
		}
	}
	killed := time.Now()
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 15*time.Second, "a new worker in place of the killed one", func() bool {
		pids := ta.app.Server().TaskWorkerPIDs()
		return len(pids) == 2 && !slices.Contains(pids, victim)
	})
	respawned := time.Since(killed)
	// A task delivered again runs alone in its worker (so that a task that
	// kills its worker takes no other with it): the held tasks start again
	// one at a time; the first is enough before the release.
	testutil.WaitFor(t, 15*time.Second, "a held task to start again", func() bool {
		by := startedBy(t, dir)
		for _, n := range held {
			if len(by[n]) >= 2 {
				return true
			}
		}
		return false
	})
	rerun := time.Since(killed)
	release()
	for n, id := range ids {
		f := ta.sink.wait(t, id)
		m, ok := f.result.(map[string]any)
		if f.err != nil || !ok {
			t.Fatalf("task %d: %v %v", n, f.result, f.err)
		}
		if pid := int(m["pid"].(int64)); pid == victim {
			t.Errorf("task %d finished in the killed worker %d", n, victim)
		}
		if slices.Contains(held, n) && m["delivery"].(int64) < 2 {
			t.Errorf("task %d, held by the killed worker, finished at delivery %v", n, m["delivery"])
		}
	}
	t.Logf("%d of %d tasks held by the killed worker %d: a new worker %v after the kill, the first held task running again %v after it (ack wait 1s), all %d finished",
		len(held), tasks, victim, respawned.Round(time.Millisecond), rerun.Round(time.Millisecond), tasks)
}
