package host_test

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// BenchmarkTaskEngines measures task throughput on the local pool and on
// NATS JetStream side by side, in one run: 64 goroutines (as many
// concurrent requests) dispatch with Server().Task, each task acknowledged
// by the engine before Task returns, at most 512 tasks in flight, until
// b.N have finished. The cases: the local pool with 2 workers;
// JetStream (an embedded server on its own, file store) with 1 and 2
// workers; two instances (two Apps, 1 worker each, sharing the NATS
// server) dispatching half of the tasks each. The metric is tasks/s
// dispatch to finish. JetStream runs with the file store's fsync policy
// "1s" (an interval: serve's --nats-sync 1s) and "always" (the default:
// each write on disk before its acknowledgement, so the disk's fsync rate
// bounds it; with 3 task streams, as serve's embedded server alone has
// then, which write at once).
func BenchmarkTaskEngines(b *testing.B) {
	b.Run("local-2w", func(b *testing.B) {
		benchEngine(b, []*host.App{engineApp(b, 2, "", 0)})
	})
	for _, sync := range []string{"1s", natsrv.SyncAlways} {
		streams := 0 // as serve's embedded server: 1 task stream, 3 when it syncs always
		if sync == natsrv.SyncAlways {
			streams = 3
		}
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("js-sync-%s-%dw", sync, w), func(b *testing.B) {
				url := benchNATS(b, sync)
				benchEngine(b, []*host.App{engineApp(b, w, url, streams)})
			})
		}
		b.Run(fmt.Sprintf("js-sync-%s-2inst", sync), func(b *testing.B) {
			url := benchNATS(b, sync)
			benchEngine(b, []*host.App{engineApp(b, 1, url, streams), engineApp(b, 1, url, streams)})
		})
	}
}

// benchNATS starts a NATS server with the fsync policy sync ("": the
// default) for one test or benchmark, stopped when it ends, and returns
// its URL with the token.
func benchNATS(tb testing.TB, sync string) string {
	tb.Helper()
	srv, err := natsrv.Start(natsrv.Config{DataDir: tb.TempDir(), Token: "tok", Sync: sync})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Shutdown)
	return strings.Replace(srv.URL(), "nats://", "nats://tok@", 1)
}

// engineDone counts the finished tasks of every App of a benchmark.
type engineDone struct {
	done   chan struct{}
	failed atomic.Int64
}

var benchDone atomic.Pointer[engineDone]

// engineApp is an App with workers task workers, on the local pool
// (url "") or on the NATS server at url with streams task streams (0:
// the default), whose finish callback signals benchDone.
func engineApp(b *testing.B, workers int, url string, streams int) *host.App {
	b.Helper()
	root := testutil.WriteTree(b, map[string]string{
		"task/echo.go": taskFile("echo", "", `func(n int, label string) any { return map[string]any{"n": n, "label": label} }`),
	})
	opts := []host.Option{host.WithRoot(root), host.WithLogOutput(io.Discard, 0), host.WithTaskWorkers(workers),
		host.WithTaskCoroutine(true), host.WithConfig(func(c *host.Config) { c.WorkerCommand = testWorkerCommand })}
	if url != "" {
		opts = append(opts, host.WithConfig(func(c *host.Config) { c.NATS.URL, c.NATS.Tasks.Streams = url, streams }))
	}
	app := host.New(opts...)
	app.Symbols(symbols.Symbols)
	app.OnTaskFinish(func(id int64, result any, err error) {
		d := benchDone.Load()
		if err != nil {
			d.failed.Add(1)
		}
		d.done <- struct{}{}
	})
	if _, err := app.Handler(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { app.Close() })
	return app
}

// benchEngine warms the apps' workers up, then runs b.N tasks spread
// over the apps and reports tasks/s.
func benchEngine(b *testing.B, apps []*host.App) {
	const dispatchers, window = 64, 512
	d := &engineDone{done: make(chan struct{}, b.N+window+64)}
	benchDone.Store(d)
	warm := 20 * len(apps)
	runTasks(b, apps, warm, dispatchers, window, d)
	b.ResetTimer()
	start := time.Now()
	runTasks(b, apps, b.N, dispatchers, window, d)
	elapsed := time.Since(start)
	b.StopTimer()
	if n := d.failed.Load(); n > 0 {
		b.Fatalf("%d tasks failed", n)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tasks/s")
}

// runTasks dispatches n tasks from dispatchers goroutines, at most window
// unfinished at a time, and waits for all of them to finish.
func runTasks(b *testing.B, apps []*host.App, n, dispatchers, window int, d *engineDone) {
	slots := make(chan struct{}, window)
	var next atomic.Int64
	var wg sync.WaitGroup
	finished := make(chan struct{})
	go func() {
		for range n {
			<-d.done
			<-slots
		}
		close(finished)
	}()
	for g := range dispatchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv := apps[g%len(apps)].Server()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				slots <- struct{}{}
				if _, err := srv.Task(host.Task{Handler: "/task/echo", Args: []any{i, "bench"}}); err != nil {
					b.Error(err)
					d.done <- struct{}{} // counted as finished, so that the wait ends
				}
			}
		}()
	}
	wg.Wait()
	<-finished
}
