package taskpool

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/zealgo/zealgo/internal/jstask"
	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/taskproto"
)

// queueWorker is the side of a worker process that pulls its tasks from
// NATS JetStream (jstask.Worker) and runs them through the Runner. Its
// nil value stands for a worker without a queue: every method does
// nothing.
type queueWorker struct {
	conn   *natsrv.Conn
	w      *jstask.Worker
	cancel context.CancelFunc // stops the pulling
}

// openQueue connects to the queue of cfg; nil cfg: no queue.
func openQueue(ctx context.Context, cfg *taskproto.QueueConfig, log *slog.Logger, run Runner) (*queueWorker, error) {
	if cfg == nil {
		return nil, nil
	}
	conn, err := natsrv.Connect(ctx, cfg.URL, natsrv.ConnectOptions{Name: "zealgo task worker", Token: cfg.Token})
	if err != nil {
		return nil, fmt.Errorf("zealgo: worker: %w", err)
	}
	w, err := jstask.NewWorker(ctx, conn.JS, jstask.WorkerConfig{
		Config:      jstaskConfig(*cfg, log),
		Concurrency: cfg.Concurrency,
		Grace:       cfg.Grace,
		Limits:      limitsOf(run),
	})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("zealgo: worker: %w", err)
	}
	return &queueWorker{conn: conn, w: w}, nil
}

// Limiter is a Runner that knows the attempts, backoff and time limit
// a task's file declares; on JetStream they apply to its tasks.
type Limiter interface {
	TaskLimits(task string) jstask.Limits
}

// limitsOf returns the handlers' limits of run, when it is a Limiter.
func limitsOf(run Runner) func(handler string) jstask.Limits {
	l, ok := run.(Limiter)
	if !ok {
		return nil
	}
	return func(handler string) jstask.Limits { return l.TaskLimits(strings.TrimPrefix(handler, "/task/")) }
}

// jstaskConfig is the jstask.Config that the dispatchers and workers of
// q share.
func jstaskConfig(q taskproto.QueueConfig, log *slog.Logger) jstask.Config {
	return jstask.Config{Prefix: q.Prefix, AckWait: q.AckWait, MaxDeliver: q.MaxDeliver, Replicas: q.Replicas,
		Attempts: q.Attempts, Backoff: q.Backoff, Timeout: q.Timeout, MaxQueued: q.MaxQueued, MaxInFlight: q.MaxInFlight,
		Streams: q.Streams, ResultStreams: q.ResultStreams, ResultBatch: q.ResultBatch, Logger: log}
}

// start pulls and runs tasks on a goroutine counted in wg until stop; the
// returned channel receives the error that ended the pulling early (the
// connection was closed). Without a queue it returns nil, which a select
// never receives from.
func (q *queueWorker) start(wg *sync.WaitGroup, run Runner) <-chan error {
	if q == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	q.cancel = cancel
	ended := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := q.w.Run(ctx, queueRunner(run)); err != nil {
			ended <- err
		}
	}()
	return ended
}

// stop stops pulling: the running tasks get the grace of
// QueueConfig.Grace, then go back to the queue.
func (q *queueWorker) stop() {
	if q != nil && q.cancel != nil {
		q.cancel()
	}
}

// close closes the connection.
func (q *queueWorker) close() {
	if q != nil {
		q.stop()
		q.conn.Close()
	}
}

// queueRunner adapts run to jstask: the task's request id and trace
// context go into Call.Meta, its delivery into Call.Delivery, and a failure keeps its
// class as the TaskError's kind. A task cut short by the worker's
// shutdown (its context done) goes back to the queue.
func queueRunner(run Runner) jstask.Runner {
	return func(ctx context.Context, t jstask.Task, delivery int) (json.RawMessage, error) {
		c := Call{ID: t.ID, Task: strings.TrimPrefix(t.Handler, "/task/"), Args: t.Args, Delivery: delivery}
		if t.RequestID != "" || len(t.TraceContext) > 0 {
			c.Meta = map[string]string{}
			if t.RequestID != "" {
				c.Meta[MetaRequestID] = t.RequestID
			}
			for k, v := range traceOf(t.TraceContext) {
				c.Meta[k] = v
			}
		}
		r := run.Run(ctx, c)
		if r.Err == nil && r.Fail == "" {
			return r.Value, nil
		}
		te := &jstask.TaskError{ID: t.ID, Handler: t.Handler, Kind: r.Fail}
		if te.Kind == "" {
			te.Kind = taskproto.FailError
		}
		if r.Err != nil {
			te.Msg = r.Err.Error()
		}
		return nil, te
	}
}
