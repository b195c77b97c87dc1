// Package taskpool is zealgo's task engine: it carries a task from the
// server that dispatches it to the process that runs it, and its end back
// to the server's finish callback.
//
// The server side is an Engine over a Backend. The Backend carries tasks;
// Pool runs worker processes on this machine (the same executable in the
// worker role), speaking the taskproto protocol over their standard input
// and output. JetStream carries them on NATS JetStream (package jstask)
// instead, durably and across instances, to the same worker processes,
// which then pull their tasks from NATS. The worker side is ServeWorker,
// which runs each task it is sent, or pulls, through a Runner that the
// application hands it: the engine knows nothing of handler files, the
// interpreter or the application's API, and imports none of them.
package taskpool

import (
	"context"
	"encoding/json"
	"errors"
)

// ErrStopped is returned by Backend.Dispatch once the backend is shutting
// down.
var ErrStopped = errors.New("zealgo: task workers are stopped")

// Job is a task on its way to a backend.
type Job struct {
	// ID is the task's id, unique among the server's tasks (among all
	// instances' tasks with a Durable backend).
	ID int64
	// Handler is the task, "/task/<name>", checked by the dispatcher.
	Handler string
	// Args are the positional arguments as a JSON array.
	Args json.RawMessage
	// Meta is what the dispatcher attaches to the task, such as the id
	// of the request that dispatched it; it reaches the Runner.
	Meta map[string]string
}

// Outcome is the end of a task, as a backend reports it: the task's
// JSON-encoded result, or its failure, which crosses processes as plain
// data.
type Outcome struct {
	ID      int64
	Handler string
	// Result is the JSON-encoded return value; nil when Fail is set or
	// the func returns nothing.
	Result json.RawMessage
	// Fail is the class of a failure (taskproto.FailError, ...); empty
	// when the task succeeded.
	Fail string
	// Err describes the failure.
	Err string
}

// Failed returns the outcome of job failing with class fail and message msg.
func Failed(job Job, fail, msg string) Outcome {
	return Outcome{ID: job.ID, Handler: job.Handler, Fail: fail, Err: msg}
}

// MetaRequestID is the key of Job.Meta (and Call.Meta) that holds the id
// of the request that dispatched the task.
const MetaRequestID = "request_id"

// MetaKey is the key of Job.Meta that holds the task's idempotency key;
// a backend that knows keys (JetStream) drops a second task with the same
// key. It does not reach the Runner.
const MetaKey = "key"

// MetaAttempts, MetaBackoff and MetaTimeout are the keys of Job.Meta
// that hold a task's own attempts (a number), backoff and time limit
// (durations, as time.Duration.String writes them); a backend that
// knows retries (JetStream) applies them.
const (
	MetaAttempts = "attempts"
	MetaBackoff  = "backoff"
	MetaTimeout  = "timeout"
)

// Backend carries tasks from the dispatcher to whatever runs them, and
// their ends back. Pool runs worker processes on this machine; JetStream,
// a queue serving several machines, can take its place.
type Backend interface {
	// Start starts the backend. It must call finish exactly once for
	// every task it accepts, from any goroutine, until Shutdown returns.
	Start(finish func(Outcome)) error
	// Dispatch accepts a task, or returns why it cannot (ErrStopped once
	// shutting down), and then never reports it. It must not wait for
	// the task to run; ctx bounds the wait for the task to be accepted.
	Dispatch(ctx context.Context, job Job) error
	// Shutdown stops accepting tasks, waits for the accepted ones until
	// ctx is done, reports those left as failed with
	// taskproto.FailShutdown and stops everything it started. At the
	// deadline it may first cancel the running tasks' contexts and give
	// them a short grace to return, as Pool does.
	Shutdown(ctx context.Context) error
}

// Durable is a Backend that keeps tasks and their ends across restarts of
// the dispatcher, as JetStream does. It hands out the task ids itself,
// unique across the instances that share it, and acknowledges an end only
// once its finish callback has returned: the Engine therefore calls the
// callback directly, on the backend's goroutine, one end at a time,
// instead of through its own queue, where a crash would lose the ends
// queued there.
type Durable interface {
	Backend
	// NextID returns a new task id.
	NextID(ctx context.Context) (int64, error)
}
