package taskpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/zealgo/zealgo/internal/taskproto"
)

// Call is one task for a Runner.
type Call struct {
	ID   int64
	Task string // the <name> of /task/<name>
	Args json.RawMessage
	Meta map[string]string
	// Delivery is 1 on a task's first run, more when a queue delivers it
	// again because the worker of an earlier run died or stalled.
	Delivery int
}

// Result is a Runner's answer: the task's JSON-encoded return value, or
// the class of its failure (taskproto.FailError, ...) and the error.
type Result struct {
	Value json.RawMessage
	Fail  string
	Err   error
}

// Runner runs tasks inside a worker process. Run is called from several
// goroutines at once in coroutine mode; ctx is cancelled when the server
// asks the worker to cancel its tasks, at its shutdown deadline.
type Runner interface {
	Run(ctx context.Context, c Call) Result
}

// RunnerFunc adapts a func to Runner.
type RunnerFunc func(ctx context.Context, c Call) Result

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, c Call) Result { return f(ctx, c) }

// Setup prepares a worker process from the configuration the server
// sent: it returns the Runner of its tasks and the logger of the worker's
// own records, which the server reads from the worker's standard error.
type Setup func(cfg taskproto.WorkerConfig) (Runner, *slog.Logger, error)

// worker runs the tasks of one worker process.
type worker struct {
	run    Runner
	log    *slog.Logger
	w      *taskproto.Writer
	ctx    context.Context // given to tasks; done at Cancel
	wg     sync.WaitGroup
	serial chan *taskproto.Message // nil in coroutine mode
	calls  *Calls                  // nil: none
}

// ServeWorker is the worker role of a process that a Pool started: it
// reads its configuration from in and hands it to setup, then runs each
// task it is sent and reports its end on out, until Stop (or ctx is
// done): then it lets its running tasks finish and returns. Cancel
// cancels the running tasks' context: the server sends it at the shutdown
// deadline. When in ends, the server is gone and it returns at once,
// abandoning the running tasks.
//
// When the configuration names a queue (taskproto.WorkerConfig.Queue),
// the worker pulls its tasks from NATS JetStream instead, and their ends
// go back through JetStream (see queue.go); in still carries Stop.
//
// A signal that ends ctx (SIGTERM, as systemd sends to every process of a
// service) does not cancel the tasks: the server, which gets it too,
// decides when to cancel them, at its shutdown deadline.
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer, setup Setup) error {
	return ServeWorkerCalls(ctx, in, out, setup, nil)
}

// ServeWorkerCalls is ServeWorker whose tasks may call the server
// through calls (nil: none), answered by the Pool's Config.OnCall.
func ServeWorkerCalls(ctx context.Context, in io.Reader, out io.Writer, setup Setup, calls *Calls) error {
	r, w := taskproto.NewReader(in, 0), taskproto.NewWriter(out, 0)
	calls.attach(w)
	defer calls.detach()
	cfg, err := readConfig(r)
	if err != nil {
		return err
	}
	run, log, err := setup(cfg)
	if err != nil {
		return err
	}
	q, err := openQueue(ctx, cfg.Queue, log, run)
	if err != nil {
		return err
	}
	defer q.close()
	tctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wk := &worker{run: run, log: log, w: w, ctx: tctx, calls: calls}
	if !cfg.Coroutine {
		wk.serial = make(chan *taskproto.Message, 1024)
		go wk.runSerial()
	}
	if err := w.Write(&taskproto.Message{Kind: taskproto.KindReady, PID: os.Getpid(), Version: taskproto.Version}); err != nil {
		return fmt.Errorf("zealgo: worker: %w", err)
	}
	stop, gone := make(chan struct{}), make(chan error, 1)
	go wk.read(r, stop, cancel, gone)
	pulled := q.start(&wk.wg, run)
	select {
	case err := <-gone:
		return lost(err)
	case err := <-pulled:
		return err
	case <-stop:
	case <-ctx.Done():
	}
	q.stop()
	idle := make(chan struct{})
	go func() { wk.wg.Wait(); close(idle) }()
	select {
	case <-idle:
		return nil
	case err := <-gone:
		return lost(err)
	}
}

// readConfig reads the Init message.
func readConfig(r *taskproto.Reader) (taskproto.WorkerConfig, error) {
	var cfg taskproto.WorkerConfig
	m, err := r.Read()
	if err != nil {
		return cfg, fmt.Errorf("zealgo: worker: reading the configuration: %w", err)
	}
	if m.Kind != taskproto.KindInit {
		return cfg, fmt.Errorf("zealgo: worker: first message is %s, want init", m.Kind)
	}
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		return cfg, fmt.Errorf("zealgo: worker: configuration: %w", err)
	}
	return cfg, nil
}

// read takes the server's messages until its input ends, which it sends
// on gone.
func (wk *worker) read(r *taskproto.Reader, stop chan struct{}, cancel func(), gone chan<- error) {
	var once sync.Once
	for {
		m, err := r.Read()
		if err != nil {
			wk.calls.detach()
			gone <- err
			return
		}
		switch m.Kind {
		case taskproto.KindRun:
			wk.start(m)
		case taskproto.KindStop:
			once.Do(func() { close(stop) })
		case taskproto.KindCancel:
			cancel()
		case taskproto.KindReply:
			wk.calls.reply(m)
		default:
			wk.log.Warn("zealgo: worker: unexpected message", "kind", m.Kind.String())
		}
	}
}

// lost ends a worker whose server is gone: its tasks are abandoned.
func lost(err error) error {
	if err == io.EOF {
		return nil
	}
	return fmt.Errorf("zealgo: worker: %w", err)
}

// start runs a task in its own goroutine, or queues it in serial mode.
func (wk *worker) start(m *taskproto.Message) {
	wk.wg.Add(1)
	if wk.serial != nil {
		wk.serial <- m
		return
	}
	go wk.runOne(m)
}

func (wk *worker) runSerial() {
	for m := range wk.serial {
		wk.runOne(m)
	}
}

// runOne runs one task and reports its end.
func (wk *worker) runOne(m *taskproto.Message) {
	defer wk.wg.Done()
	res := &taskproto.Message{Kind: taskproto.KindDone, ID: m.ID}
	r := wk.call(m)
	if r.Err != nil || r.Fail != "" {
		res.Fail = r.Fail
		if res.Fail == "" {
			res.Fail = taskproto.FailError
		}
		if r.Err != nil {
			res.Err = r.Err.Error()
		}
	} else {
		res.Result = r.Value
	}
	err := wk.w.Write(res)
	if errors.Is(err, taskproto.ErrFrameTooLarge) {
		err = wk.w.Write(&taskproto.Message{Kind: taskproto.KindDone, ID: m.ID, Fail: taskproto.FailResult,
			Err: fmt.Sprintf("the result is %d bytes encoded, over the bound of %d", len(res.Result)+len(res.Err), taskproto.MaxFrame)})
	}
	if err != nil {
		wk.log.Error("zealgo: worker: reporting a task", "id", m.ID, "err", err)
	}
}

// call runs the task through the Runner; a panic that the Runner lets
// through fails the task and leaves the worker running.
func (wk *worker) call(m *taskproto.Message) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			wk.log.Error("task panic", "id", m.ID, "task", m.Task, "panic", fmt.Sprint(p))
			r = Result{Fail: taskproto.FailPanic, Err: fmt.Errorf("panic: %v", p)}
		}
	}()
	return wk.run.Run(wk.ctx, Call{ID: m.ID, Task: m.Task, Args: m.Args, Meta: m.Meta, Delivery: 1})
}
