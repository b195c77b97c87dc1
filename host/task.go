package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zealgo/zealgo/internal/jstask"
	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/taskpool"
	"github.com/zealgo/zealgo/internal/taskproto"
)

// Errors of task dispatch, and the kinds of TaskError a finish callback
// receives: test them with errors.Is.
var (
	// ErrTasksStopped is returned by Server.Task once the task workers
	// are shutting down.
	ErrTasksStopped = errors.New("zealgo: task workers are stopped")
	// ErrTaskFailed: the task func returned a non-nil error.
	ErrTaskFailed = errors.New("zealgo: task returned an error")
	// ErrTaskPanicked: the task func panicked; its worker keeps going.
	ErrTaskPanicked = errors.New("zealgo: task panicked")
	// ErrTaskArgs: the arguments do not fit the task func's parameters.
	ErrTaskArgs = errors.New("zealgo: task arguments do not fit")
	// ErrTaskLoad: the task file is missing, does not compile or holds no
	// task func.
	ErrTaskLoad = errors.New("zealgo: task file could not be loaded")
	// ErrTaskResult: the task's result cannot be encoded as JSON.
	ErrTaskResult = errors.New("zealgo: task result is not JSON-encodable")
	// ErrWorkerExited: the worker process running the task died (it is
	// restarted), or none could be started.
	ErrWorkerExited = errors.New("zealgo: task worker exited")
	// ErrTaskShutdown: the server shut down before the task finished:
	// the task had not started, or it was still running when the grace
	// that follows the cancelling of its context at the shutdown deadline
	// ran out.
	ErrTaskShutdown = errors.New("zealgo: task cut short by shutdown")
	// ErrTaskDeliveries: on NATS JetStream, the task was delivered
	// NATSConfig.MaxDeliver times without finishing: its workers died or
	// stalled each time.
	ErrTaskDeliveries = errors.New("zealgo: task delivered too many times")
	// ErrTaskTimeout: on NATS JetStream, the task ran past its time
	// limit (TaskLimits.Timeout) on its last attempt.
	ErrTaskTimeout = errors.New("zealgo: task ran past its time limit")
	// ErrTaskQueueFull is returned by Server.Task when the queue on NATS
	// holds TaskLimits.MaxQueued tasks.
	ErrTaskQueueFull = errors.New("zealgo: the task queue is full")
	// ErrTaskDuplicate is returned by Server.Task for a Task whose Key
	// was dispatched already and that no longer waits in the queue.
	ErrTaskDuplicate = errors.New("zealgo: a task with this key was dispatched already")
)

// TaskError is the error a finish callback receives for a task that did
// not complete. Kind is one of ErrTaskFailed, ErrTaskPanicked,
// ErrTaskArgs, ErrTaskLoad, ErrTaskResult, ErrWorkerExited,
// ErrTaskShutdown and ErrTaskDeliveries, and errors.Is matches it. An error returned by a task
// func crosses the process boundary as its text only.
type TaskError struct {
	ID      int64  // the task id Server.Task returned
	Handler string // the task, "/task/<name>"
	Kind    error  // what happened
	Msg     string // the details
}

// Error returns "zealgo: task /task/<name> (id N): <details>".
func (e *TaskError) Error() string {
	return fmt.Sprintf("zealgo: task %s (id %d): %s", e.Handler, e.ID, e.Msg)
}

// Unwrap returns Kind.
func (e *TaskError) Unwrap() error { return e.Kind }

// taskFailKinds map the engine's failure classes to the kinds of
// TaskError.
var taskFailKinds = map[string]error{
	taskproto.FailError: ErrTaskFailed, taskproto.FailPanic: ErrTaskPanicked, taskproto.FailArgs: ErrTaskArgs,
	taskproto.FailLoad: ErrTaskLoad, taskproto.FailResult: ErrTaskResult,
	taskproto.FailExited: ErrWorkerExited, taskproto.FailShutdown: ErrTaskShutdown,
	taskproto.FailDeliveries: ErrTaskDeliveries, jstask.KindTimeout: ErrTaskTimeout,
}

// taskError is the TaskError of a failed outcome.
func taskError(o taskpool.Outcome) *TaskError {
	kind, ok := taskFailKinds[o.Fail]
	if !ok {
		kind = ErrTaskFailed
	}
	return &TaskError{ID: o.ID, Handler: o.Handler, Kind: kind, Msg: o.Err}
}

// tasks is the task component of the server process: the engine that
// runs task files on the worker processes or over NATS, and what
// dispatching a task and handing over its end need. Its zero value is
// stopped.
type tasks struct {
	engine   taskpool.Engine
	log      *slog.Logger
	dir      string                  // task/
	stat     func(path string) error // whether a task file exists (statTask, source.go)
	onFinish func(id int64, result any, err error)
	ops      *opsState // metrics and tracing (task_ops.go)
}

// taskDeps is what the task component is made with.
type taskDeps struct {
	cfg      *Config
	log      *slog.Logger
	dirs     *appDirs
	nats     *natsState
	ops      *opsState
	stat     func(path string) error
	onFinish func(id int64, result any, err error)
	onCall   func(ctx context.Context, op string, body json.RawMessage) (json.RawMessage, error) // a worker's calls (shared.go)
}

// startTasks starts the task engine, if the application has task
// workers: on NATS JetStream when it uses NATS (nats.go), else over local
// worker processes alone. Without task workers t stays stopped.
func (t *tasks) start(d taskDeps) error {
	// Field by field: the engine, which Server.TaskWorkerPIDs may read
	// meanwhile, is started in place, never overwritten.
	t.log, t.dir, t.onFinish, t.ops = d.log, d.dirs.task, d.onFinish, d.ops
	t.stat = d.stat
	if d.stat != nil {
		t.stat = newStatCache(d.stat).check // task_stat.go
	}
	switch n := d.cfg.TaskWorkerNum; {
	case n < 0:
		return fmt.Errorf("zealgo: TaskWorkerNum is %d; it must be 0 (no task workers) or more", n)
	case n == 0:
		return nil
	}
	cfg := d.cfg
	pc := taskpool.Config{Workers: cfg.TaskWorkerNum, Coroutine: cfg.TaskEnableCoroutine,
		Command: cfg.WorkerCommand, Log: d.log, Worker: taskproto.WorkerConfig{Root: d.dirs.root,
			DataDir: cfg.DataDir, Dev: cfg.Dev, Debounce: cfg.ReloadDebounce, DB: dbURL(cfg)}, OnCall: d.onCall}
	var b taskpool.Backend = taskpool.New(pc)
	if d.nats.conn != nil {
		b = taskpool.NewJetStream(jetStreamConfig(cfg, d.nats, pc))
	}
	if err := t.engine.Start(b, t.observeFinish(t.finish), d.log); err != nil { // task_ops.go
		return fmt.Errorf("zealgo: task workers: %w", err)
	}
	return nil
}

// queueConcurrency is how many tasks a worker process pulls from
// JetStream at once in coroutine mode.
const queueConcurrency = 64

// jetStreamConfig configures the task engine on NATS JetStream: the
// worker processes of pc pull from it, with the URL and token the server
// is reached with, and get three quarters of the shutdown timeout to
// finish their running tasks.
func jetStreamConfig(cfg *Config, nats *natsState, pc taskpool.Config) taskpool.JetStreamConfig {
	conc, lim := 1, cfg.NATS.Tasks
	if cfg.TaskEnableCoroutine {
		conc = queueConcurrency
	}
	return taskpool.JetStreamConfig{Pool: pc, JS: nats.conn.JS, MaxPayload: nats.conn.NC.MaxPayload(),
		Instance: nats.instance, Queue: taskproto.QueueConfig{URL: nats.url, Token: nats.token,
			AckWait: cfg.NATS.AckWait, MaxDeliver: cfg.NATS.MaxDeliver, Concurrency: conc,
			Grace: cfg.ShutdownTimeout * 3 / 4, Replicas: nats.replicas, Attempts: lim.Attempts, Backoff: lim.Backoff,
			Timeout: lim.Timeout, MaxQueued: lim.MaxQueued, MaxInFlight: lim.MaxInFlight, Streams: taskStreams(cfg, nats),
			ResultStreams: resultStreams(cfg, nats), ResultBatch: resultBatch},
		StartWait: startWait(cfg)}
}

// resultBatch is how many results a worker process stores in one
// message at most (jstask.Config.ResultBatch): the results of the tasks
// that end while its earlier ones are being stored.
const resultBatch = 64

// syncStreams is the number of task streams on an embedded server alone
// that syncs every write: its streams write at once, each one write at a
// time (about 1.8 times the tasks per second of one stream, measured).
const syncStreams = 3

// taskStreams is NATSConfig.Tasks.Streams, else syncStreams on an
// embedded server alone that syncs always, else 0: jstask's default,
// the replica count.
func taskStreams(cfg *Config, nats *natsState) int {
	sync := cfg.NATS.Sync
	switch {
	case cfg.NATS.Tasks.Streams > 0:
		return cfg.NATS.Tasks.Streams
	case !nats.shared && nats.replicas <= 1 && (sync == "" || sync == natsrv.SyncAlways):
		return syncStreams
	}
	return 0
}

// resultStreams is as many results streams as task streams on a server
// alone (one replica): each result stored is a sync of its stream when
// the server syncs every write, one at a time per stream, so that one
// results stream bounded the tasks per second by the disk's syncs (each
// task stream syncs twice per task, storing it and removing it, each
// results stream once). Else 0: jstask's default, 1 (a cluster's
// replicated streams sync on their own schedule).
func resultStreams(cfg *Config, nats *natsState) int {
	if nats.replicas <= 1 {
		return taskStreams(cfg, nats)
	}
	return 0
}

// ready is the readiness probe of the local worker pool: ready while a
// worker runs (taskpool.Readiness).
func (t *tasks) ready(ctx context.Context) (bool, error) {
	if !t.engine.Started() {
		return false, nil
	}
	return true, t.engine.Ready(ctx)
}

// stop shuts the task engine down once, waiting for running tasks and
// for their finish callbacks until ctx is done.
func (t *tasks) stop(ctx context.Context) { t.engine.Stop(ctx) }

// close is stop within timeout (Config.ShutdownTimeout), for Close.
func (t *tasks) close(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	t.stop(ctx)
}

// dispatchTimeout bounds the wait for the engine to accept a task.
const dispatchTimeout = 10 * time.Second

// dispatch is Server.Task and Server.TaskContext: the id of the request
// whose context ctx is, if any, travels with the task. workers is
// Config.TaskWorkerNum, which tells why a stopped engine takes no task.
func (tk *tasks) dispatch(ctx context.Context, workers int, t Task) (int64, error) {
	if !tk.engine.Started() {
		if workers == 0 {
			return 0, ErrNoTaskWorkers
		}
		return 0, fmt.Errorf("%w: start the application (Handler, Serve or Main) first", taskpool.ErrNotStarted)
	}
	name, err := taskName(t.Handler)
	if err != nil {
		return 0, err
	}
	if err := tk.stat(filepath.Join(tk.dir, name+".go")); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("zealgo: task %s: there is no file task/%s.go: %w", t.Handler, name, fs.ErrNotExist)
		}
		return 0, fmt.Errorf("zealgo: task %s: %w", t.Handler, err)
	}
	args, err := taskproto.EncodeArgs(t.Args)
	if err != nil {
		return 0, fmt.Errorf("zealgo: task %s: %w", t.Handler, err)
	}
	var meta map[string]string
	if st, _ := ctx.Value(stateKey{}).(*reqState); st != nil {
		meta = map[string]string{taskpool.MetaRequestID: st.id}
	}
	meta = ownLimits(meta, t)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dispatchTimeout)
	defer cancel()
	id, err := tk.engine.DispatchObserved(ctx, t.Handler, args, meta, tk.dispatching(ctx)) // metrics and trace (task_ops.go)
	switch {
	case errors.Is(err, taskpool.ErrStopped):
		return 0, ErrTasksStopped
	case errors.Is(err, jstask.ErrQueueFull):
		return 0, fmt.Errorf("%w: %w", ErrTaskQueueFull, err)
	case errors.Is(err, jstask.ErrDuplicate):
		return 0, fmt.Errorf("%w: %w", ErrTaskDuplicate, err)
	}
	return id, err
}

// ownLimits adds t's idempotency key and its own attempts, backoff and
// time limit, those set, to meta.
func ownLimits(meta map[string]string, t Task) map[string]string {
	set := func(k, v string) {
		if meta == nil {
			meta = map[string]string{}
		}
		meta[k] = v
	}
	if t.Key != "" {
		set(taskpool.MetaKey, t.Key)
	}
	if t.Attempts > 0 {
		set(taskpool.MetaAttempts, strconv.Itoa(t.Attempts))
	}
	if t.Backoff > 0 {
		set(taskpool.MetaBackoff, t.Backoff.String())
	}
	if t.Timeout > 0 {
		set(taskpool.MetaTimeout, t.Timeout.String())
	}
	return meta
}

// taskName checks a handler path of the form /task/<name> and returns
// the name.
func taskName(handler string) (string, error) {
	name, ok := strings.CutPrefix(handler, "/task/")
	if !ok || !validName(name) {
		return "", fmt.Errorf("zealgo: task handler %q: want /task/<name>, a file under task/ with a name of [a-zA-Z0-9_-]", handler)
	}
	return name, nil
}

// finish hands a task's end to the application's callback, with the
// result decoded by taskproto.DecodeResult (whole numbers as int64) or
// the failure as a *TaskError, or logs it: the result as the task's JSON.
// The engine calls it one task at a time.
func (t *tasks) finish(o taskpool.Outcome) {
	var result any
	var err error
	if o.Fail != "" {
		err = taskError(o)
	} else if len(o.Result) > 0 {
		var jerr error
		if result, jerr = taskproto.DecodeResult(o.Result); jerr != nil {
			err = &TaskError{ID: o.ID, Handler: o.Handler, Kind: ErrTaskResult, Msg: jerr.Error()}
		}
	}
	defer func() {
		if p := recover(); p != nil {
			t.log.Error("zealgo: OnTaskFinish panicked", "id", o.ID, "task", o.Handler, "panic", fmt.Sprint(p))
		}
	}()
	if f := t.onFinish; f != nil {
		f(o.ID, result, err)
		return
	}
	if err != nil {
		t.log.Warn("task failed", "id", o.ID, "task", o.Handler, "err", err)
		return
	}
	res := string(o.Result)
	if len(res) > 1024 {
		res = res[:1024] + "…"
	}
	t.log.Info("task finished", "id", o.ID, "task", o.Handler, "result", res)
}
