package host

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// ErrNoTaskWorkers is returned by Server.Task when the application runs no
// task workers; the task is dropped.
var ErrNoTaskWorkers = errors.New("zealgo: no task workers")

// Task is a unit of background work: the task file to run, as
// "/task/<name>", and the positional arguments of its func.
type Task struct {
	Handler string
	Args    []any
	// Key, when set, is the task's idempotency key (on NATS JetStream):
	// a second dispatch with the same key within two minutes, such as a
	// client's retry after a lost answer, is dropped and returns the
	// first one's id while it waits in the queue, else ErrTaskDuplicate.
	// A dispatch whose answer NATS lost is retried with the same key.
	// Left out of the JSON of a Task without one, which stays as it was.
	Key string `json:",omitempty"`
	// Attempts, Backoff and Timeout, when set, are this task's own
	// retries and time limit on NATS JetStream, over its file's (var
	// retry, TaskRetry) and the serve flags' (TaskLimits): how many
	// times it runs when it fails, the pause before the second run
	// (doubled at each further one), and the bound of one run. The local
	// pool (--nats off) runs a task once, without a time limit. Left out
	// of the JSON of a Task without them.
	Attempts int           `json:",omitempty"`
	Backoff  time.Duration `json:",omitempty"`
	Timeout  time.Duration `json:",omitempty"`
}

// Server is the running server handle (the spec's $server), reached
// through App.Server.
type Server struct {
	app  *App
	http any // *http.Server once it serves; any: see httpOf
}

// httpOf returns the HTTP server of s, nil before it serves (Server.http
// is an any: see rtOf).
func httpOf(s *Server) *http.Server {
	h, _ := s.http.(*http.Server)
	return h
}

// Addr returns the address the server listens on, or "" before it starts.
//
//go:noinline
func (s *Server) Addr() string {
	if s == nil {
		return ""
	}
	if h := httpOf(s); h != nil {
		return h.Addr
	}
	return ""
}

// Task dispatches t to a task worker and returns its id at once. The
// task's result, or its failure as a *TaskError, reaches the application's
// OnTaskFinish callback in this process. With no task workers it returns
// ErrNoTaskWorkers and does nothing else.
//
// t.Handler must be "/task/<name>" with a name of [a-zA-Z0-9_-], naming
// the file task/<name>.go; anything else is refused, as are arguments
// that JSON cannot encode. Arguments and results cross the process
// boundary as JSON: each argument is decoded into the type of its
// parameter (a number into an int or a float64, an object into a map or
// a struct, ...), and the finish callback receives the result as
// encoding/json decodes it into an any (map[string]any, []any, float64,
// string, bool or nil).
//
// Server.Task knows of no request: in a handler, prefer API.Task, which
// sends the request's id along with the task (TaskInfo.RequestID in the
// task, request_id in its log records).
func (s *Server) Task(t Task) (int64, error) {
	return rtOf(s.app).tasks.dispatch(context.Background(), s.app.cfg.TaskWorkerNum, t)
}

// TaskContext is Task with a context: when ctx is a request's (API.Context,
// or r.Context() in middleware), the request's id travels with the task;
// with tracing on (ops.go), so does its trace: the task runs in its worker
// in a span that is a child of the request's, and the worker's log records
// about the task carry the trace id.
// Neither ctx's deadline nor its cancellation (a client that went away)
// cuts the dispatch short: the wait for the task engine to accept the
// task (on NATS, until JetStream has stored it) is bounded by 10s.
func (s *Server) TaskContext(ctx context.Context, t Task) (int64, error) {
	return rtOf(s.app).tasks.dispatch(ctx, s.app.cfg.TaskWorkerNum, t)
}

// TaskWorkerPIDs returns the process ids of the running task workers, in
// worker order; none without local task workers.
//
//go:noinline
func (s *Server) TaskWorkerPIDs() []int {
	return rtOf(s.app).tasks.engine.PIDs()
}

// MetricsAddr returns the address the metrics listener listens on (with
// the port chosen when Config.Ops.MetricsAddr asked for port 0), or "".
//
//go:noinline
func (s *Server) MetricsAddr() string { return rtOf(s.app).ops.metricsAddr() }
