package host_test

import (
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// taskBench is an application with two task workers (this test binary in
// the worker role) whose finish callback records when each task ended.
type taskBench struct {
	app  *host.App
	mu   sync.Mutex
	sent map[int64]time.Time
	took []time.Duration
	done chan struct{} // receives after each finish
}

func newTaskBench(b *testing.B, coroutine bool) *taskBench {
	b.Helper()
	root := testutil.WriteTree(b, map[string]string{
		"task/echo.go": taskFile("echo", "", `func(n int, label string) any { return map[string]any{"n": n, "label": label} }`),
	})
	tb := &taskBench{sent: map[int64]time.Time{}, done: make(chan struct{}, b.N+64)}
	tb.app = host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, 0), host.WithTaskWorkers(2),
		host.WithTaskCoroutine(coroutine), host.WithConfig(func(c *host.Config) { c.WorkerCommand = testWorkerCommand }))
	tb.app.Symbols(symbols.Symbols)
	tb.app.OnTaskFinish(func(id int64, result any, err error) {
		now := time.Now()
		if err != nil {
			b.Errorf("task %d: %v", id, err)
		}
		tb.mu.Lock()
		tb.took = append(tb.took, now.Sub(tb.sent[id]))
		delete(tb.sent, id)
		tb.mu.Unlock()
		tb.done <- struct{}{}
	})
	if _, err := tb.app.Handler(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tb.app.Close() })
	// Warm up: compile the task in both workers.
	for i := 0; i < 20; i++ {
		tb.dispatch(b, i)
		<-tb.done
	}
	tb.took = nil
	return tb
}

func (tb *taskBench) dispatch(b *testing.B, n int) {
	tb.mu.Lock() // the callback waits for sent[id]
	defer tb.mu.Unlock()
	t0 := time.Now()
	id, err := tb.app.Server().Task(host.Task{Handler: "/task/echo", Args: []any{n, "bench"}})
	if err != nil {
		b.Fatal(err)
	}
	tb.sent[id] = t0
}

// report adds the p50 and p99 of dispatch-to-finish and tasks per second.
func (tb *taskBench) report(b *testing.B, elapsed time.Duration) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	slices.Sort(tb.took)
	pct := func(p float64) float64 {
		return float64(tb.took[int(p*float64(len(tb.took)-1))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(len(tb.took))/elapsed.Seconds(), "tasks/s")
}

// BenchmarkTaskRoundTrip dispatches one task at a time to two workers
// and waits for its finish callback: the latency of a task in an idle
// server.
func BenchmarkTaskRoundTrip(b *testing.B) {
	tb := newTaskBench(b, true)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		tb.dispatch(b, i)
		<-tb.done
	}
	tb.report(b, time.Since(start))
}

// BenchmarkTaskThroughput keeps 64 tasks in flight on two workers until
// b.N have finished: tasks per second, and each task's dispatch-to-finish
// time under that load.
func BenchmarkTaskThroughput(b *testing.B) {
	const window = 64
	for _, mode := range []struct {
		name      string
		coroutine bool
	}{{"coroutine", true}, {"serial", false}} {
		b.Run(mode.name, func(b *testing.B) {
			tb := newTaskBench(b, mode.coroutine)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if i >= window {
					<-tb.done
				}
				tb.dispatch(b, i)
			}
			for i := 0; i < min(b.N, window); i++ {
				<-tb.done
			}
			tb.report(b, time.Since(start))
		})
	}
}
