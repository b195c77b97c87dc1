package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
)

// TaskError is the error a finish callback receives for a task that did
// not complete. Kind is one of ErrTaskFailed, ErrTaskPanicked,
// ErrTaskArgs, ErrTaskLoad, ErrTaskResult, ErrWorkerExited and
// ErrTaskShutdown, and errors.Is matches it. An error returned by a task
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

// TaskJob is a task on its way to a backend: its id, its handler
// ("/task/<name>", checked) and its arguments as a JSON array.
type TaskJob struct {
	ID      int64
	Handler string
	Args    json.RawMessage
	// TraceContext carries the dispatcher's trace to the task (the W3C
	// traceparent and tracestate, as propagation.MapCarrier keys); nil
	// when the task was dispatched outside a trace.
	TraceContext map[string]string
}

// TaskOutcome is the end of a task, as a backend reports it: the
// JSON-encoded result, or an error (a *TaskError, normally).
type TaskOutcome struct {
	ID      int64
	Handler string
	Result  json.RawMessage
	Err     error
}

// TaskBackend carries tasks from Server.Task to whatever runs them. The
// default runs Config.TaskWorkerNum worker processes on this machine; a
// queue engine serving several machines can take its place through
// App.TaskBackend, with the handler-facing API unchanged.
type TaskBackend interface {
	// Start starts the backend. It must call finish exactly once for
	// every task it accepts, from any goroutine, until Shutdown returns.
	Start(finish func(TaskOutcome)) error
	// Dispatch accepts a task, or returns why it cannot (and then never
	// reports it). It must not wait for the task to run.
	Dispatch(job TaskJob) error
	// Shutdown stops accepting tasks, waits for the accepted ones until
	// ctx is done, reports those left as failed with ErrTaskShutdown and
	// stops everything it started. At the deadline it may first cancel
	// the running tasks' contexts and give them a short grace to return,
	// as the local worker pool does.
	Shutdown(ctx context.Context) error
}

// TaskBackend makes b carry the application's tasks instead of local
// worker processes; Config.TaskWorkerNum then does not matter.
func (a *App) TaskBackend(b TaskBackend) {
	a.mustConfigure()
	a.tasks.custom = b
}

// taskState is the application's side of tasks: the backend, the ids and
// the finish callbacks.
type taskState struct {
	custom  TaskBackend                    // set by App.TaskBackend
	running atomic.Pointer[taskBackendRef] // custom or the local pool, once started; nil without tasks
	seq     atomic.Int64
	stop    sync.Once
	fin     finishQueue
}

// taskBackendRef holds the running backend.
type taskBackendRef struct{ b TaskBackend }

// backend returns the running backend, or nil.
func (ts *taskState) backend() TaskBackend {
	if r := ts.running.Load(); r != nil {
		return r.b
	}
	return nil
}

// maxTaskArgs bounds the encoded arguments of one task.
const maxTaskArgs = taskproto.MaxFrame - 64<<10

// startTasks starts the task backend, if the application has one.
func (a *App) startTasks() error {
	ts := &a.tasks
	ts.fin.a = a
	b := ts.custom
	if b == nil {
		switch n := a.cfg.TaskWorkerNum; {
		case n < 0:
			return fmt.Errorf("zealgo: TaskWorkerNum is %d; it must be 0 (no task workers) or more", n)
		case n == 0:
			return nil
		}
		b = newLocalPool(a)
	}
	if err := b.Start(a.observeTaskFinish(ts.fin.push)); err != nil {
		return fmt.Errorf("zealgo: task workers: %w", err)
	}
	ts.running.Store(&taskBackendRef{b})
	return nil
}

// stopTasks shuts the task backend down once, waiting for running tasks
// and for their finish callbacks until ctx is done.
func (a *App) stopTasks(ctx context.Context) {
	ts := &a.tasks
	ts.stop.Do(func() {
		b := ts.backend()
		if b == nil {
			return
		}
		if err := b.Shutdown(ctx); err != nil {
			a.Logger().Warn("zealgo: task workers shutdown", "err", err)
		}
		// The callbacks of tasks failed at the deadline still run.
		wctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if d, ok := ctx.Deadline(); ok && time.Until(d) > 2*time.Second {
			wctx = ctx
		}
		ts.fin.wait(wctx)
	})
}

// closeTasks is stopTasks within Config.ShutdownTimeout, for Close.
func (a *App) closeTasks() {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	a.stopTasks(ctx)
}

// dispatchTask is Server.Task and Server.TaskContext.
func (a *App) dispatchTask(ctx context.Context, t Task) (int64, error) {
	ts := &a.tasks
	b := ts.backend()
	if b == nil {
		if ts.custom == nil && a.cfg.TaskWorkerNum == 0 {
			return 0, ErrNoTaskWorkers
		}
		return 0, errors.New("zealgo: task workers have not started: start the application (Handler, Serve or Main) first")
	}
	name, err := taskName(t.Handler)
	if err != nil {
		return 0, err
	}
	if _, err := os.Stat(filepath.Join(a.dirs.task, name+".go")); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("zealgo: task %s: there is no file task/%s.go: %w", t.Handler, name, fs.ErrNotExist)
		}
		return 0, fmt.Errorf("zealgo: task %s: %w", t.Handler, err)
	}
	args := t.Args
	if args == nil {
		args = []any{}
	}
	enc, err := json.Marshal(args)
	if err != nil {
		return 0, fmt.Errorf("zealgo: task %s: arguments must be JSON-encodable: %w", t.Handler, err)
	}
	if len(enc) > maxTaskArgs {
		return 0, fmt.Errorf("zealgo: task %s: arguments are %d bytes encoded; the bound is %d", t.Handler, len(enc), maxTaskArgs)
	}
	job := TaskJob{ID: ts.seq.Add(1), Handler: t.Handler, Args: enc}
	end := a.dispatching(ctx, &job) // metrics and trace (task_ops.go)
	err = b.Dispatch(job)
	end(err)
	if err != nil {
		return 0, err
	}
	return job.ID, nil
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

// finishQueue runs the finish callbacks one at a time, in the order tasks
// finish, on a goroutine of its own so that a slow callback does not hold
// up the workers.
type finishQueue struct {
	a       *App
	mu      sync.Mutex
	items   []TaskOutcome
	running bool
}

func (q *finishQueue) push(o TaskOutcome) {
	q.mu.Lock()
	q.items = append(q.items, o)
	if !q.running {
		q.running = true
		go q.drain()
	}
	q.mu.Unlock()
}

func (q *finishQueue) drain() {
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.items, q.running = nil, false
			q.mu.Unlock()
			return
		}
		o := q.items[0]
		q.items[0] = TaskOutcome{}
		q.items = q.items[1:]
		q.mu.Unlock()
		q.call(o)
	}
}

// wait returns when every queued callback has run, or when ctx is done.
func (q *finishQueue) wait(ctx context.Context) {
	for {
		q.mu.Lock()
		idle := !q.running && len(q.items) == 0
		q.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-ctx.Done():
			q.a.Logger().Warn("zealgo: task finish callbacks still running at shutdown")
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// call decodes the result (decodeResult: integers arrive as int64) and
// runs the application's callback, or logs the result as the task's JSON.
func (q *finishQueue) call(o TaskOutcome) {
	a := q.a
	var result any
	err := o.Err
	if err == nil && len(o.Result) > 0 {
		var jerr error
		if result, jerr = decodeResult(o.Result); jerr != nil {
			err = &TaskError{ID: o.ID, Handler: o.Handler, Kind: ErrTaskResult, Msg: jerr.Error()}
		}
	}
	defer func() {
		if p := recover(); p != nil {
			a.Logger().Error("zealgo: OnTaskFinish panicked", "id", o.ID, "task", o.Handler, "panic", fmt.Sprint(p))
		}
	}()
	if f := a.onTaskFinish; f != nil {
		f(o.ID, result, err)
		return
	}
	if err != nil {
		a.Logger().Warn("task failed", "id", o.ID, "task", o.Handler, "err", err)
		return
	}
	res := string(o.Result)
	if len(res) > 1024 {
		res = res[:1024] + "…"
	}
	a.Logger().Info("task finished", "id", o.ID, "task", o.Handler, "result", res)
}

// decodeResult decodes a task's JSON result for the finish callback:
// objects become map[string]any, arrays []any, strings and booleans
// themselves, and a number int64 when JSON writes it as an integer that
// fits (so that large integers such as 1<<60 keep every digit), float64
// otherwise. A float64 result with a whole value, such as 2.0, which JSON
// writes as 2, thus arrives as int64 too.
func decodeResult(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return resultNumbers(v), nil
}

// resultNumbers replaces each json.Number in v with an int64 or a
// float64.
func resultNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64() // out of range: ±Inf, which JSON never writes
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = resultNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = resultNumbers(e)
		}
	}
	return v
}
