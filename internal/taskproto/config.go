package taskproto

import "time"

// WorkerConfig is what the server tells a worker in the Init message.
type WorkerConfig struct {
	// Root is the application directory.
	Root string `json:"root"`
	// DataDir is the application's data directory.
	DataDir string `json:"data_dir"`
	// Slot is the worker's number in its pool, from 0.
	Slot int `json:"slot"`
	// Coroutine runs each task in a goroutine of its own; without it the
	// worker runs one task at a time.
	Coroutine bool `json:"coroutine"`
	// Dev is the server's development mode.
	Dev bool `json:"dev"`
	// Debounce is the quiet period before a changed file is reloaded;
	// zero keeps the worker's default.
	Debounce time.Duration `json:"debounce"`
	// DB is the application's database URL, for the worker's own pool.
	DB string `json:"db,omitempty"`
	// Queue, when set, makes the worker pull its tasks from NATS
	// JetStream instead of receiving them from the server.
	Queue *QueueConfig `json:"queue,omitempty"`
}

// QueueConfig tells a worker where to pull its tasks from: the NATS
// server and what the dispatchers agreed on (package jstask).
type QueueConfig struct {
	// URL is the NATS server or cluster, nats://[token@]host:port[,...].
	URL string `json:"url"`
	// Token authenticates to the server, when the URL does not hold it.
	Token string `json:"token,omitempty"`
	// Prefix names the streams; empty for jstask's default.
	Prefix string `json:"prefix,omitempty"`
	// AckWait and MaxDeliver are jstask.Config's; zero for the defaults.
	AckWait    time.Duration `json:"ack_wait,omitempty"`
	MaxDeliver int           `json:"max_deliver,omitempty"`
	// Concurrency is how many tasks the worker runs at once.
	Concurrency int `json:"concurrency"`
	// Grace is how long running tasks may finish after the server asks
	// the worker to stop; zero for jstask's default.
	Grace time.Duration `json:"grace,omitempty"`
	// Replicas, Attempts, Backoff, Timeout, MaxQueued and MaxInFlight
	// are jstask.Config's; zero for the defaults.
	Replicas    int           `json:"replicas,omitempty"`
	Attempts    int           `json:"attempts,omitempty"`
	Backoff     time.Duration `json:"backoff,omitempty"`
	Timeout     time.Duration `json:"timeout,omitempty"`
	MaxQueued   int           `json:"max_queued,omitempty"`
	MaxInFlight int           `json:"max_inflight,omitempty"`
	// Streams is jstask.Config's: how many task streams; zero for the
	// default.
	Streams int `json:"streams,omitempty"`
	// ResultStreams is jstask.Config's: how many results streams; zero
	// for the default.
	ResultStreams int `json:"result_streams,omitempty"`
	// ResultBatch is jstask.Config's: how many results a worker may
	// store in one message; zero for one a message.
	ResultBatch int `json:"result_batch,omitempty"`
}

// The classes of a failed task, in Message.Fail. A worker sends the first
// five; a pool uses FailExited and FailShutdown for tasks that no worker
// finished, a queue FailDeliveries.
const (
	// FailError: the task func returned a non-nil error.
	FailError = "error"
	// FailPanic: the task func panicked.
	FailPanic = "panic"
	// FailArgs: the arguments do not fit the func's parameters.
	FailArgs = "args"
	// FailLoad: the task file is missing, does not compile or holds no
	// task func.
	FailLoad = "load"
	// FailResult: the result cannot be encoded as JSON, or is too large.
	FailResult = "result"
	// FailExited: the worker running the task died, or none could start.
	FailExited = "exited"
	// FailShutdown: the server shut down before the task finished.
	FailShutdown = "shutdown"
	// FailDeliveries: the queue delivered the task as many times as it
	// may without seeing it finish (its workers died or stalled).
	FailDeliveries = "deliveries"
)
