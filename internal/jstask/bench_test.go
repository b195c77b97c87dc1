package jstask

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/natsrv"
)

// BenchmarkDispatchRun measures jstask alone, in one process: an
// embedded NATS server (fsync every second), workers running 64 tasks
// each at once with a runner that returns its arguments, and 64
// goroutines dispatching on one Client, at most 512 tasks unfinished.
// The metric is tasks/s from dispatch to the finish callback. The
// "-batch64" cases let the workers batch results (Config.ResultBatch).
func BenchmarkDispatchRun(b *testing.B) {
	for _, batch := range []int{0, 64} {
		for _, workers := range []int{1, 2} {
			name := fmt.Sprintf("%dw", workers)
			if batch > 0 {
				name += fmt.Sprintf("-batch%d", batch)
			}
			b.Run(name, func(b *testing.B) { benchDispatchRun(b, workers, batch) })
		}
	}
}

func benchDispatchRun(b *testing.B, workers, batch int) {
	srv, err := natsrv.Start(natsrv.Config{DataDir: b.TempDir(), Sync: "1s"})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ResultBatch: batch}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range workers {
		conn, err := natsrv.Connect(ctx, srv.URL(), natsrv.ConnectOptions{Name: "worker"})
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		w, err := NewWorker(ctx, conn.JS, WorkerConfig{Config: cfg, Concurrency: 64})
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = w.Run(ctx, func(_ context.Context, t Task, _ int) (json.RawMessage, error) { return t.Args, nil })
		}()
	}
	conn, err := natsrv.Connect(ctx, srv.URL(), natsrv.ConnectOptions{Name: "dispatcher"})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	done := make(chan struct{}, 1024)
	var failed atomic.Int64
	c, err := Open(ctx, conn.JS, cfg, "bench", func(_ int64, _ string, _ json.RawMessage, err error) {
		if err != nil {
			failed.Add(1)
		}
		done <- struct{}{}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	dispatchAll(b, c, 100, done)
	b.ResetTimer()
	start := time.Now()
	dispatchAll(b, c, b.N, done)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "tasks/s")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d tasks failed", n)
	}
}

// dispatchAll dispatches n tasks from 64 goroutines, at most 512
// unfinished, and waits for their finish.
func dispatchAll(b *testing.B, c *Client, n int, done chan struct{}) {
	slots := make(chan struct{}, 512)
	finished := make(chan struct{})
	go func() {
		for range n {
			<-done
			<-slots
		}
		close(finished)
	}()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range benchDispatchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				slots <- struct{}{}
				args, _ := json.Marshal([]any{i, "bench"})
				if _, err := c.Dispatch(context.Background(), Task{Handler: "/task/echo", Args: args}); err != nil {
					b.Error(err)
					done <- struct{}{}
				}
			}
		}()
	}
	wg.Wait()
	<-finished
}

// benchDispatchers is how many goroutines dispatch at once.
var benchDispatchers = envInt("JSTASK_BENCH_DISPATCHERS", 64)
