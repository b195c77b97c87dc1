package taskpool

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/zealgo/zealgo/internal/taskproto"
)

// Timings of the pool.
const (
	workerHandshake   = 15 * time.Second // from start to the Ready message
	workerExitGrace   = 2 * time.Second  // from the end of its output to a kill
	workerMaxDelay    = 5 * time.Second  // longest wait between two restarts
	workerCancelGrace = time.Second      // from Cancel at the shutdown deadline to a kill
)

// Config configures a Pool.
type Config struct {
	// Workers is the number of worker processes, at least 1.
	Workers int
	// Coroutine lets a worker take several tasks at once, each in a
	// goroutine of its own; without it a worker takes one at a time.
	Coroutine bool
	// Command returns the command that starts a worker: an executable
	// that calls ServeWorker. The pool sets its Stdin, Stdout and Stderr.
	// Nil: this executable with the argument "worker".
	Command func() *exec.Cmd
	// Log receives the pool's records and the workers' own, which they
	// write to their standard error as slog JSON records. Nil: slog's
	// default logger.
	Log *slog.Logger
	// Worker is sent to each worker at start, with Slot and Coroutine
	// set by the pool.
	Worker taskproto.WorkerConfig
	// OnCall answers the calls that the code of tasks makes to the
	// server (Calls.Call in the worker): op and its JSON body in, the
	// JSON answer or an error out. Nil: calls fail.
	OnCall func(ctx context.Context, op string, body json.RawMessage) (json.RawMessage, error)
}

// Pool is the Backend of worker processes on this machine, each serving
// tasks over its standard input and output. Tasks wait in a queue of the
// server and go to the least loaded worker; without Coroutine a worker
// takes one task at a time. A worker that dies is restarted, and the
// tasks it held are reported as failed (taskproto.FailExited).
type Pool struct {
	cfg    Config
	log    *slog.Logger
	n      int
	finish func(Outcome)

	mu      sync.Mutex
	procs   []*workerProc // by slot; nil while (re)starting
	pending []Job
	closing bool
	changed chan struct{} // closed and replaced on every change of load
	closed  chan struct{} // closed when Shutdown begins
	rr      int
	wg      sync.WaitGroup // supervisors
}

// New returns a pool with cfg; Start starts its workers.
func New(cfg Config) *Pool {
	if cfg.Command == nil {
		cfg.Command = defaultCommand
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Worker.Coroutine = cfg.Coroutine
	p := &Pool{cfg: cfg, log: cfg.Log, n: max(cfg.Workers, 0), changed: make(chan struct{}), closed: make(chan struct{})}
	p.procs = make([]*workerProc, p.n)
	return p
}

// defaultCommand runs this executable with the worker command.
func defaultCommand() *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.Command(exe, "worker")
}

// Dispatch queues the task and hands it to a worker if one can take it;
// it does not wait, so ctx is not used.
func (p *Pool) Dispatch(_ context.Context, job Job) error {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		return ErrStopped
	}
	p.pending = append(p.pending, job)
	sends := p.pumpLocked()
	p.mu.Unlock()
	p.send(sends)
	return nil
}

type sendItem struct {
	wp  *workerProc
	job Job
}

// pumpLocked moves queued tasks to workers with room, the least loaded
// first; the caller sends them after unlocking.
func (p *Pool) pumpLocked() []sendItem {
	var sends []sendItem
	for len(p.pending) > 0 {
		wp := p.pickLocked()
		if wp == nil {
			break
		}
		job := p.pending[0]
		p.pending[0] = Job{}
		p.pending = p.pending[1:]
		wp.inflight[job.ID] = job
		sends = append(sends, sendItem{wp, job})
	}
	if len(p.pending) == 0 {
		p.pending = nil
	}
	return sends
}

// pickLocked returns the least loaded worker with room, taking turns
// among equals, or nil.
func (p *Pool) pickLocked() *workerProc {
	var best *workerProc
	for k := 0; k < p.n; k++ {
		wp := p.procs[(p.rr+k)%p.n]
		if wp == nil || wp.stopping || (!p.cfg.Coroutine && len(wp.inflight) > 0) {
			continue
		}
		if best == nil || len(wp.inflight) < len(best.inflight) {
			best = wp
		}
	}
	if best != nil {
		p.rr = (best.slot + 1) % p.n
	}
	return best
}

// send writes Run messages. A worker that cannot take one is killed: its
// supervisor then reports the tasks it held as failed.
func (p *Pool) send(items []sendItem) {
	for _, it := range items {
		name := strings.TrimPrefix(it.job.Handler, "/task/")
		err := it.wp.w.Write(&taskproto.Message{Kind: taskproto.KindRun, ID: it.job.ID, Task: name, Args: it.job.Args, Meta: it.job.Meta})
		if err != nil {
			p.log.Warn("task worker does not take tasks; stopping it", "worker", it.wp.slot, "pid", it.wp.pid, "err", err)
			it.wp.kill()
		}
	}
}

func (p *Pool) signalLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// busyLocked reports whether any task is queued or running.
func (p *Pool) busyLocked() bool {
	if len(p.pending) > 0 {
		return true
	}
	for _, wp := range p.procs {
		if wp != nil && len(wp.inflight) > 0 {
			return true
		}
	}
	return false
}

// Shutdown refuses new tasks, waits for the queued and running ones until
// ctx is done, then stops the workers: politely when they are idle. At
// the deadline it fails the queued tasks, cancels the running tasks'
// contexts and gives them workerCancelGrace to return (what they return
// reaches the finish callback), then kills the workers still running:
// their tasks fail with taskproto.FailShutdown.
func (p *Pool) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closing = true
	close(p.closed)
	p.mu.Unlock()
	err := p.drain(ctx)
	procs := p.stopAccepting()
	for _, wp := range procs {
		wp.stop(err != nil)
	}
	limit := ctx
	if err != nil {
		p.log.Warn("tasks still running at the shutdown deadline: cancelling them", "grace", workerCancelGrace)
		var cancel context.CancelFunc
		limit, cancel = context.WithTimeout(context.Background(), workerCancelGrace)
		defer cancel()
	}
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-limit.Done():
		for _, wp := range procs {
			wp.kill()
		}
		<-done
	}
	return err
}

// drain waits until no task is queued or running, or ctx is done.
func (p *Pool) drain(ctx context.Context) error {
	for {
		p.mu.Lock()
		busy, ch := p.busyLocked(), p.changed
		p.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("zealgo: tasks still running at the shutdown deadline: %w", ctx.Err())
		}
	}
}

// stopAccepting fails the queued tasks and marks the running workers as
// stopping, which it returns.
func (p *Pool) stopAccepting() []*workerProc {
	p.mu.Lock()
	jobs := p.pending
	p.pending = nil
	var procs []*workerProc
	for _, wp := range p.procs {
		if wp != nil {
			wp.stopping = true
			procs = append(procs, wp)
		}
	}
	p.mu.Unlock()
	p.failAll(jobs, taskproto.FailShutdown, "the server shut down before the task started")
	return procs
}

// PIDs lists the running workers' process ids, in worker order.
func (p *Pool) PIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for _, wp := range p.procs {
		if wp != nil {
			out = append(out, wp.pid)
		}
	}
	return out
}
