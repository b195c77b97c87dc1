package taskpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zealgo/zealgo/internal/jstask"
	"github.com/zealgo/zealgo/internal/taskproto"
)

// JetStreamConfig configures a JetStream backend.
type JetStreamConfig struct {
	// Pool configures the worker processes of this instance. Their
	// Worker.Queue is set from Queue.
	Pool Config
	// JS is this instance's connection to the NATS server or cluster.
	JS jetstream.JetStream
	// MaxPayload is the largest message the server accepts
	// (nats.Conn.MaxPayload); the task's arguments must fit in it.
	MaxPayload int64
	// Instance names this instance among those sharing the streams: its
	// results are kept for it under that name while it is down. It must
	// stay the same across restarts.
	Instance string
	// Queue tells the worker processes where to pull from: the server's
	// URL and token as they reach it, and AckWait, MaxDeliver, Prefix,
	// which the dispatching side uses too.
	Queue taskproto.QueueConfig
	// StartWait bounds the setting up of the streams at Start, which
	// waits while a cluster that has just formed elects its leaders or
	// cannot place the replicas yet. Default: the worker handshake's
	// 15s.
	StartWait time.Duration
}

// JetStream is the Durable backend on NATS JetStream (package jstask):
// Dispatch publishes the task to a work queue that every instance's
// worker processes pull from, and the end of a task, run by any of them,
// comes back to the instance that dispatched it, also after its restart.
// The worker processes of this instance are a Pool that carries no task
// itself: it starts them, restarts one that dies, and stops them.
//
// Delivery is at least once: a task whose worker died is delivered again
// after Queue.AckWait, and one delivered Queue.MaxDeliver times without
// finishing ends as failed with taskproto.FailDeliveries. Shutdown does
// not fail the tasks still queued: they wait for a worker, of this
// instance after its restart or of another.
type JetStream struct {
	cfg     JetStreamConfig
	pool    *Pool
	client  *jstask.Client
	maxArgs int
	closing atomic.Bool
}

// taskOverhead is what a task message holds besides its arguments, at most:
// the other fields of the JSON body and the headers.
const taskOverhead = 16 << 10

// NewJetStream returns the backend; Start starts it.
func NewJetStream(cfg JetStreamConfig) *JetStream {
	q := cfg.Queue
	cfg.Pool.Worker.Queue = &q
	maxArgs := int(cfg.MaxPayload) - taskOverhead
	return &JetStream{cfg: cfg, pool: New(cfg.Pool), maxArgs: min(maxArgs, taskproto.MaxArgs)}
}

// Start opens the streams, starts reading this instance's results, which
// may have waited for it, and starts the worker processes. finish is
// called one end at a time; each is acknowledged when finish returns.
func (b *JetStream) Start(finish func(Outcome)) error {
	q := b.cfg.Queue
	// A result handed to an instance that died before acknowledging it
	// waits the same ack wait as a task, then goes to its restart.
	cfg := jstaskConfig(q, b.cfg.Pool.Log)
	cfg.ResultAckWait = q.AckWait
	ctx, cancel := context.WithTimeout(context.Background(), max(b.cfg.StartWait, workerHandshake))
	defer cancel()
	c, err := jstask.Open(ctx, b.cfg.JS, cfg, b.cfg.Instance, func(id int64, handler string, result json.RawMessage, err error) {
		finish(outcome(id, handler, result, err))
	})
	if err != nil {
		return err
	}
	if err := b.pool.Start(func(Outcome) {}); err != nil {
		c.Close()
		return err
	}
	b.client = c
	return nil
}

// outcome turns a jstask end into an Outcome; a TaskError's kind is the
// class of the failure.
func outcome(id int64, handler string, result json.RawMessage, err error) Outcome {
	o := Outcome{ID: id, Handler: handler, Result: result}
	if err == nil {
		return o
	}
	o.Result, o.Fail, o.Err = nil, taskproto.FailError, err.Error()
	var te *jstask.TaskError
	if errors.As(err, &te) {
		o.Err = te.Msg
		switch te.Kind {
		case jstask.KindDeliveries:
			o.Fail = taskproto.FailDeliveries
		case jstask.KindBadTask:
			o.Fail = taskproto.FailLoad
		case "":
		default:
			o.Fail = te.Kind
		}
	}
	return o
}

// NextID returns a task id unique across the instances sharing the
// streams and across their restarts.
func (b *JetStream) NextID(ctx context.Context) (int64, error) {
	return b.client.NextID(ctx)
}

// Dispatch publishes the task and returns once JetStream has stored it.
// The request id and the trace context in job.Meta travel with it.
func (b *JetStream) Dispatch(ctx context.Context, job Job) error {
	_, err := b.DispatchKeyed(ctx, job)
	return err
}

// DispatchKeyed is Dispatch that returns the task's id: job.ID, or, for
// a second task with the idempotency key of job.Meta[MetaKey], the first
// one's (jstask.ErrDuplicate when it is no longer queued).
func (b *JetStream) DispatchKeyed(ctx context.Context, job Job) (int64, error) {
	if b.closing.Load() {
		return 0, ErrStopped
	}
	if len(job.Args) > b.maxArgs {
		return 0, fmt.Errorf("zealgo: task %s: arguments are %d bytes encoded; the bound on this NATS server is %d", job.Handler, len(job.Args), b.maxArgs)
	}
	t := jstask.Task{ID: job.ID, Handler: job.Handler, Args: job.Args, RequestID: job.Meta[MetaRequestID],
		TraceContext: traceOf(job.Meta), Key: job.Meta[MetaKey]}
	t.Attempts, _ = strconv.Atoi(job.Meta[MetaAttempts])
	t.Backoff, _ = time.ParseDuration(job.Meta[MetaBackoff])
	t.Timeout, _ = time.ParseDuration(job.Meta[MetaTimeout])
	return b.client.Dispatch(ctx, t)
}

// Shutdown stops the worker processes, letting their running tasks
// finish within Queue.Grace (what does not finish goes back to the
// queue), then stops reading results. Queued tasks stay queued.
func (b *JetStream) Shutdown(ctx context.Context) error {
	b.closing.Store(true)
	err := b.pool.Shutdown(ctx)
	if b.client != nil {
		b.client.Close()
	}
	return err
}

// PIDs lists the process ids of this instance's worker processes.
func (b *JetStream) PIDs() []int { return b.pool.PIDs() }
