// Package jstask carries zealgo's tasks on NATS JetStream, between the
// server instances that dispatch them and the worker processes that run
// them, on one machine or many.
//
// The streams are named after Config.Prefix (default "zealgo"), with
// Config.Replicas copies each (3 on a cluster of three servers or more):
//
//	ZEALGO_TASKS    subject zealgo.tasks, and ZEALGO_TASKS_<i>, subject
//	                zealgo.tasks.<i>, for i = 1 to Config.Streams-1: work
//	                queues of at most Config.MaxQueued tasks together.
//	                Dispatch publishes each task to one of them (dispatch.go)
//	                with its id, or its Key, as de-duplication id (Nats-Msg-Id);
//	                workers pull from each through its durable consumer
//	                "workers" and acknowledge a task only once its result
//	                is recorded. Their leaders are spread over the servers
//	                (SpreadGroups, natsrv.Spreader), so that a server lost
//	                stops one of them.
//	ZEALGO_RESULTS  subjects zealgo.results.<instance>.<id>; one message per
//	                task (a second is refused), kept for Config.ResultRetention.
//	                Each instance reads its own subjects through the durable
//	                consumer "results-<instance>", so that results wait for
//	                an instance that is down.
//	                With Config.ResultStreams above 1, ZEALGO_RESULTS_<i>,
//	                subjects zealgo.results_<i>.<instance>.<id>, take the
//	                results of the tasks whose Results is i, each with its
//	                consumer "results-<instance>".
//	ZEALGO_IDS      subject zealgo.ids; its sequence hands out blocks of
//	                task ids, unique across instances and restarts.
//	ZEALGO_DEAD     subjects zealgo.dead.<id>: the tasks given up (their
//	                attempts failed, or their workers died MaxDeliver
//	                times), kept for Config.DeadRetention, to list, retry
//	                or purge (dead.go).
//
// The streams are created at start (Open, NewWorker) or updated to the
// Config; a stream lost while running is never created again behind the
// user's back: dispatch fails with ErrStreamLost, which says what to do.
//
// A worker that dies mid-task leaves the task unacknowledged: JetStream
// delivers it again after Config.AckWait, and the runner sees the number
// of the delivery. A running task's acknowledgement deadline is renewed
// (InProgress) while it runs. A delivery beyond Config.MaxDeliver is not
// run: it finishes the task as failed (ErrMaxDeliver). A task delivered
// again runs alone in its worker, so that a task that kills its worker
// takes no other task with it the next time. A task that fails is run
// again after Config.Backoff, up to Config.Attempts runs.
package jstask

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Task is one task on its way to a worker.
type Task struct {
	// ID is the task's id, unique across instances (Client.NextID).
	ID int64 `json:"id"`
	// Handler names the task, "/task/<name>".
	Handler string `json:"handler"`
	// Args are the task's arguments, JSON-encoded.
	Args json.RawMessage `json:"args,omitempty"`
	// RequestID is the id of the request that dispatched the task.
	RequestID string `json:"request_id,omitempty"`
	// TraceContext carries the dispatcher's trace (W3C traceparent and
	// tracestate, for example).
	TraceContext map[string]string `json:"trace,omitempty"`
	// Instance is the dispatching instance, where the result goes; set
	// by Dispatch.
	Instance string `json:"instance"`
	// Dispatched is when Dispatch published the task; set by Dispatch.
	Dispatched time.Time `json:"dispatched"`
	// Key, when set, is the task's idempotency key: a second dispatch
	// with the same key within Config.DuplicateWindow is dropped, and
	// Dispatch returns the first one's id.
	Key string `json:"key,omitempty"`
	// Results is the results stream the task's result goes to (0 to
	// Config.ResultStreams-1), chosen by Dispatch, so that every run of
	// the task writes to the same one.
	Results int `json:"results,omitempty"`
	// Attempts, Backoff and Timeout override Config's for this task
	// when set.
	Attempts int           `json:"attempts,omitempty"`
	Backoff  time.Duration `json:"backoff,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
}

// The kinds of failure a TaskError reports. A runner may return a
// *TaskError of a kind of its own (the host uses "args" and "load").
const (
	// KindError: the runner returned an error.
	KindError = "error"
	// KindPanic: the runner panicked.
	KindPanic = "panic"
	// KindResult: the result could not be recorded (too large).
	KindResult = "result"
	// KindDeliveries: the task was delivered Config.MaxDeliver times
	// without finishing (its workers died or stalled).
	KindDeliveries = "deliveries"
	// KindBadTask: the task message could not be decoded.
	KindBadTask = "task"
	// KindTimeout: the task ran past its time limit (Config.Timeout,
	// Task.Timeout).
	KindTimeout = "timeout"
)

// ErrQueueFull is returned by Dispatch when the queue holds
// Config.MaxQueued tasks.
var ErrQueueFull = errors.New("zealgo: the task queue is full")

// ErrStreamLost is returned when a stream zealgo created is gone from the
// server (it lost its data, or someone deleted it).
var ErrStreamLost = errors.New("zealgo: a task stream is gone")

// ErrDuplicate is returned by Dispatch for a task whose Key was
// dispatched already and whose first dispatch is no longer queued (it
// ran, or runs).
var ErrDuplicate = errors.New("zealgo: a task with this key was dispatched already")

// ErrMaxDeliver matches (errors.Is) the TaskError of a task given up
// after Config.MaxDeliver deliveries.
var ErrMaxDeliver = errors.New("zealgo: task delivered too many times")

// TaskError is the error the finish callback receives for a task that
// did not succeed.
type TaskError struct {
	ID         int64  // the task's id
	Handler    string // the task, "/task/<name>"
	Kind       string // KindError, KindPanic, ... or a runner's own
	Msg        string // the details
	Deliveries int    // the deliveries the task had
}

// Error returns "zealgo: task /task/<name> (id N): <details>".
func (e *TaskError) Error() string {
	return fmt.Sprintf("zealgo: task %s (id %d): %s", e.Handler, e.ID, e.Msg)
}

// Is reports whether target is ErrMaxDeliver and the task was given up
// after its deliveries.
func (e *TaskError) Is(target error) bool {
	return target == ErrMaxDeliver && e.Kind == KindDeliveries
}

// Config is what dispatchers and workers must agree on. The zero value
// of each field means its default.
type Config struct {
	// Prefix names the streams (upper-cased) and subjects; default
	// "zealgo". Letters, digits, '_' and '-'.
	Prefix string
	// AckWait is how long a delivered task may go without news from its
	// worker before it is delivered again; default 30s. A running task's
	// worker renews it every AckWait/3.
	AckWait time.Duration
	// MaxDeliver is how many times a task is delivered to run; the next
	// delivery finishes it as failed with ErrMaxDeliver. Default 5.
	MaxDeliver int
	// DuplicateWindow is how long a task id is remembered to drop a
	// second dispatch of it; default 2m.
	DuplicateWindow time.Duration
	// ResultRetention is how long a result waits for its dispatcher and
	// guards against a second result of the same task; default 24h.
	ResultRetention time.Duration
	// ResultAckWait is how long a result delivered to a dispatcher that
	// died before acknowledging it waits before it is delivered again;
	// default 30s.
	ResultAckWait time.Duration
	// Replicas is the number of copies of each stream in a cluster;
	// default 1 (see natsrv.Conn.Replicas for the cluster's choice).
	Replicas int
	// Attempts is how many times a task that fails (returns an error,
	// panics or runs past its time limit) runs before it is given up;
	// default 1 (no retry). Task.Attempts overrides it.
	Attempts int
	// Backoff is the pause before a failed task runs again, doubled at
	// each further attempt (at most 64 times it); default 1s.
	Backoff time.Duration
	// Timeout bounds one run of a task: its context is cancelled then,
	// and a task that still runs a second later makes its worker
	// recycle itself (WorkerConfig.Recycle). Default 0: no bound.
	Timeout time.Duration
	// MaxQueued bounds the tasks waiting in the queue, all task streams
	// together (each holds an equal share): a dispatch beyond it fails
	// with ErrQueueFull. Default 1,000,000.
	MaxQueued int
	// MaxInFlight bounds the tasks delivered to workers and not yet
	// acknowledged, across all workers and all task streams (each has
	// an equal share); default 1,000.
	MaxInFlight int
	// Streams is the number of task streams, each led by another server
	// of a cluster, so that dispatch goes on when one server is lost;
	// default Replicas (1 alone, 3 on a cluster of three or more), at
	// most 16.
	Streams int
	// ResultStreams is the number of results streams, the results of
	// the tasks spread over them by id: a store that syncs every write
	// writes one result at a time per stream, so that one results stream
	// bounds the tasks per second by the disk's syncs; default 1, at most
	// 16. Each instance reads every results stream there is.
	ResultStreams int
	// ResultBatch, above 1, lets a worker store up to this many results
	// of tasks in one message (batch.go): the results of first runs that
	// end while the worker's earlier results are being stored, of one
	// instance and results stream; a result that ends when none waits
	// goes alone at once. Default 0: one message per result. Instances
	// read batches whatever their own setting.
	ResultBatch int
	// DeadRetention is how long a given-up task stays in the dead-letter
	// stream; default 7 days.
	DeadRetention time.Duration
	// Logger receives what goes wrong outside a task; default
	// slog.Default().
	Logger *slog.Logger
}

// names are the streams, subjects and consumers of a Config.
type names struct {
	tasks, results, ids, dead string // streams
	taskSubj, idSubj, resPref string // subjects; resPref + "<instance>.<id>"
	deadPref                  string // deadPref + "<id>"
	runs                      string // the key-value bucket of runs alone, crash ranges (crash.go) and ended keys (keys.go)
	workers                   string // the workers' durable consumer
}

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// withDefaults checks c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Prefix == "" {
		c.Prefix = "zealgo"
	}
	if !tokenRE.MatchString(c.Prefix) {
		return c, fmt.Errorf("zealgo: jstask: prefix %q: want 1 to 64 letters, digits, '_' or '-'", c.Prefix)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.AckWait, 30*time.Second)
	def(&c.DuplicateWindow, 2*time.Minute)
	def(&c.ResultRetention, 24*time.Hour)
	def(&c.ResultAckWait, 30*time.Second)
	if c.MaxDeliver <= 0 {
		c.MaxDeliver = 5
	}
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
	if c.Attempts <= 0 {
		c.Attempts = 1
	}
	def(&c.Backoff, time.Second)
	def(&c.DeadRetention, 7*24*time.Hour)
	if c.MaxQueued <= 0 {
		c.MaxQueued = 1_000_000
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 1000
	}
	if c.Streams <= 0 {
		c.Streams = c.Replicas
	}
	c.Streams = min(c.Streams, maxStreams)
	c.ResultStreams = min(max(c.ResultStreams, 1), maxStreams)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// maxStreams bounds Config.Streams.
const maxStreams = 16

// taskStream returns the name and subject of task stream i: stream 0 is
// the one of zealgo before there were several, so that its queued tasks
// are kept.
func (n names) taskStream(i int) (stream, subject string) {
	if i == 0 {
		return n.tasks, n.taskSubj
	}
	return n.tasks + "_" + strconv.Itoa(i), n.taskSubj + "." + strconv.Itoa(i)
}

// resultStream returns the name and subject prefix of results stream i
// (prefix + "<instance>.<id>"): stream 0 is the one of zealgo before
// there were several.
func (n names) resultStream(i int) (stream, prefix string) {
	if i == 0 {
		return n.results, n.resPref
	}
	k := strconv.Itoa(i)
	return n.results + "_" + k, strings.TrimSuffix(n.resPref, ".") + "_" + k + "."
}

// names returns the streams, subjects and consumers of c.
func (c Config) names() names {
	up := strings.ToUpper(c.Prefix)
	return names{
		tasks:    up + "_TASKS",
		results:  up + "_RESULTS",
		ids:      up + "_IDS",
		dead:     up + "_DEAD",
		deadPref: c.Prefix + ".dead.",
		runs:     c.Prefix + "_task_runs",
		taskSubj: c.Prefix + ".tasks",
		idSubj:   c.Prefix + ".ids",
		resPref:  c.Prefix + ".results.",
		workers:  "workers",
	}
}

// Headers of task and result messages.
const (
	hdrID         = "Zealgo-Task-Id"
	hdrInstance   = "Zealgo-Task-Instance"
	hdrHandler    = "Zealgo-Task-Handler"
	hdrKind       = "Zealgo-Task-Fail"
	hdrDeliveries = "Zealgo-Task-Deliveries"
	hdrMsg        = "Zealgo-Task-Error"
	// hdrMaybeRan marks a task that may be queued twice (a copy of a
	// dispatch whose first publish may have been stored elsewhere): its
	// runner sees a delivery one above the server's, so that a second
	// run is never invisible.
	hdrMaybeRan = "Zealgo-Task-Maybe-Ran"
)
