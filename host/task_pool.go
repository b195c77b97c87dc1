package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zealgo/zealgo/internal/taskproto"
)

// Timings of the local worker pool.
const (
	workerHandshake   = 15 * time.Second // from start to the Ready message
	workerExitGrace   = 2 * time.Second  // from the end of its output to a kill
	workerMaxDelay    = 5 * time.Second  // longest wait between two restarts
	workerCancelGrace = time.Second      // from Cancel at the shutdown deadline to a kill
)

// workerConfig is what the server tells a worker in the Init message.
type workerConfig struct {
	Root      string        `json:"root"`
	DataDir   string        `json:"data_dir"`
	Slot      int           `json:"slot"`
	Coroutine bool          `json:"coroutine"`
	Dev       bool          `json:"dev"`
	Debounce  time.Duration `json:"debounce"`
	DB        string        `json:"db,omitempty"` // the database URL, for the worker's own pool
}

// localPool is the default TaskBackend: Config.TaskWorkerNum worker
// processes, the same binary started in the worker role, each serving
// tasks over its standard input and output. Tasks wait in a queue of the
// server and go to the least loaded worker; in serial mode a worker takes
// one task at a time. A worker that dies is restarted, and the tasks it
// held are reported as failed.
type localPool struct {
	a         *App
	log       *slog.Logger
	n         int
	coroutine bool
	newCmd    func() *exec.Cmd
	finish    func(TaskOutcome)

	mu      sync.Mutex
	procs   []*workerProc // by slot; nil while (re)starting
	pending []TaskJob
	closing bool
	changed chan struct{} // closed and replaced on every change of load
	closed  chan struct{} // closed when Shutdown begins
	rr      int
	wg      sync.WaitGroup // supervisors
}

// workerProc is one running worker process.
type workerProc struct {
	slot     int
	pid      int
	cmd      *exec.Cmd
	w        *taskproto.Writer
	r        *taskproto.Reader
	stdin    *os.File // our end of its standard input
	stdout   *os.File // our end of its standard output
	inflight map[int64]TaskJob
	stopping bool // sent Stop
	started  time.Time
	killed   atomic.Bool
	reaped   atomic.Bool // Wait returned: the pid may belong to another process now
}

func newLocalPool(a *App) *localPool {
	p := &localPool{a: a, log: a.Logger(), n: a.cfg.TaskWorkerNum, coroutine: a.cfg.TaskEnableCoroutine,
		newCmd: a.cfg.WorkerCommand, changed: make(chan struct{}), closed: make(chan struct{})}
	if p.newCmd == nil {
		p.newCmd = defaultWorkerCommand
	}
	p.procs = make([]*workerProc, p.n)
	return p
}

// defaultWorkerCommand runs this executable with the worker command.
func defaultWorkerCommand() *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.Command(exe, "worker")
}

// Start starts every worker and waits until each is ready.
func (p *localPool) Start(finish func(TaskOutcome)) error {
	p.finish = finish
	procs := make([]*workerProc, p.n)
	errs := make([]error, p.n)
	var wg sync.WaitGroup
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			procs[i], errs[i] = p.spawn(i)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, wp := range procs {
			if wp != nil {
				wp.kill()
				p.reap(wp, nil)
			}
		}
		return err
	}
	pids := make([]int, len(procs))
	p.mu.Lock()
	for i, wp := range procs {
		p.procs[i], pids[i] = wp, wp.pid
		p.wg.Add(1)
		go p.supervise(i, wp)
	}
	p.mu.Unlock()
	p.log.Info("task workers started", "workers", p.n, "coroutine", p.coroutine, "pids", pids)
	return nil
}

// spawn starts the worker of slot and waits for its Ready message.
func (p *localPool) spawn(slot int) (*workerProc, error) {
	cmd := p.newCmd()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("zealgo: task worker %d: %w", slot, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("zealgo: task worker %d: %w", slot, err)
	}
	logw := &workerLog{log: p.log, slot: slot}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, logw
	cmd.WaitDelay = workerExitGrace
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = workerSysProcAttr()
	}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("zealgo: start task worker %d (%s): %w", slot, cmd.Path, err)
	}
	logw.pid.Store(int64(cmd.Process.Pid))
	wp := &workerProc{slot: slot, pid: cmd.Process.Pid, cmd: cmd, stdin: inW, stdout: outR,
		w: taskproto.NewWriter(inW, 0), r: taskproto.NewReader(outR, 0),
		inflight: map[int64]TaskJob{}, started: time.Now()}
	cfg, _ := json.Marshal(workerConfig{Root: p.a.dirs.root, DataDir: p.a.cfg.DataDir, Slot: slot,
		Coroutine: p.coroutine, Dev: p.a.cfg.Dev, Debounce: p.a.cfg.ReloadDebounce, DB: p.a.dbURL()})
	timer := time.AfterFunc(workerHandshake, wp.kill)
	err = wp.w.Write(&taskproto.Message{Kind: taskproto.KindInit, Config: cfg})
	var m *taskproto.Message
	if err == nil {
		m, err = wp.r.Read()
	}
	timer.Stop()
	if err == nil && (m.Kind != taskproto.KindReady || m.Version != taskproto.Version) {
		err = fmt.Errorf("it answered %s version %d, want ready version %d", m.Kind, m.Version, taskproto.Version)
	}
	if err != nil {
		wp.kill()
		werr := p.reap(wp, nil)
		if werr != nil {
			err = fmt.Errorf("%w (%v)", err, werr)
		}
		return nil, fmt.Errorf("zealgo: task worker %d (pid %d, %s) did not start: %w; its output is in the log",
			slot, wp.pid, strings.Join(cmd.Args, " "), err)
	}
	p.log.Debug("task worker ready", "worker", slot, "pid", wp.pid)
	return wp, nil
}

// kill stops the worker and whatever it started, at once.
func (wp *workerProc) kill() {
	if wp.reaped.Load() {
		return
	}
	wp.killed.Store(true)
	killWorker(wp.cmd.Process)
}

// reap waits for the worker to exit, after its output ended, and closes
// our ends of its pipes. readErr is why the output ended.
func (p *localPool) reap(wp *workerProc, readErr error) error {
	exited := make(chan error, 1)
	go func() {
		err := wp.cmd.Wait()
		wp.reaped.Store(true)
		exited <- err
	}()
	if readErr != nil && readErr != io.EOF {
		wp.kill() // it speaks garbage: do not trust it to exit
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(workerExitGrace):
		wp.kill()
		err = <-exited
	}
	wp.stdin.Close()
	wp.stdout.Close()
	return err
}

// supervise serves the worker of slot, and restarts it each time it dies
// until the pool shuts down.
func (p *localPool) supervise(slot int, wp *workerProc) {
	defer p.wg.Done()
	quick := 0
	for {
		readErr := p.serve(wp)
		werr := p.reap(wp, readErr)
		lived := time.Since(wp.started)
		closing := p.exited(wp, werr, readErr)
		if closing {
			return
		}
		if lived < time.Second {
			quick++
		} else {
			quick = 0
		}
		p.log.Warn("task worker exited; restarting it", "worker", slot, "pid", wp.pid, "status", describeExit(werr, readErr))
		for {
			if !p.sleep(restartDelay(quick)) {
				return
			}
			var err error
			wp, err = p.spawn(slot)
			if err == nil {
				break
			}
			quick++
			p.log.Error("task worker could not restart", "worker", slot, "err", err)
			p.startFailed(err)
		}
		if !p.install(wp) {
			wp.kill()
			p.reap(wp, nil)
			return
		}
	}
}

// restartDelay is the pause before a restart after quick deaths in a row.
func restartDelay(quick int) time.Duration {
	if quick == 0 {
		return 0
	}
	d := 100 * time.Millisecond << min(quick-1, 6)
	return min(d, workerMaxDelay)
}

// sleep waits d, and reports false if the pool began to shut down.
func (p *localPool) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.closed:
		return false
	}
}

// install makes a restarted worker available, unless the pool is
// closing.
func (p *localPool) install(wp *workerProc) bool {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		return false
	}
	p.procs[wp.slot] = wp
	sends := p.pumpLocked()
	p.signalLocked()
	p.mu.Unlock()
	p.send(sends)
	return true
}

// serve reads the worker's reports until its output ends.
func (p *localPool) serve(wp *workerProc) error {
	for {
		m, err := wp.r.Read()
		if err != nil {
			return err
		}
		if m.Kind != taskproto.KindDone {
			p.log.Warn("task worker sent an unexpected message", "worker", wp.slot, "pid", wp.pid, "kind", m.Kind.String())
			continue
		}
		p.done(wp, m)
	}
}

// done takes the report of a finished task.
func (p *localPool) done(wp *workerProc, m *taskproto.Message) {
	p.mu.Lock()
	job, ok := wp.inflight[m.ID]
	delete(wp.inflight, m.ID)
	sends := p.pumpLocked()
	p.signalLocked()
	p.mu.Unlock()
	p.send(sends)
	if !ok {
		p.log.Warn("task worker reported a task it was not given", "worker", wp.slot, "pid", wp.pid, "id", m.ID)
		return
	}
	o := TaskOutcome{ID: job.ID, Handler: job.Handler, Result: m.Result}
	if m.Fail != "" || m.Err != "" {
		o.Result = nil
		o.Err = &TaskError{ID: job.ID, Handler: job.Handler, Kind: failKind(m.Fail), Msg: m.Err}
	}
	p.finish(o)
}

// failKinds map the worker's failure classes to the errors of TaskError.
var failKinds = map[string]error{
	"error": ErrTaskFailed, "panic": ErrTaskPanicked, "args": ErrTaskArgs, "load": ErrTaskLoad, "result": ErrTaskResult,
}

func failKind(fail string) error {
	if k, ok := failKinds[fail]; ok {
		return k
	}
	return ErrTaskFailed
}

// exited takes a dead worker out and fails the tasks it held. It reports
// whether the pool is closing.
func (p *localPool) exited(wp *workerProc, werr, readErr error) bool {
	p.mu.Lock()
	if p.procs[wp.slot] == wp {
		p.procs[wp.slot] = nil
	}
	held := wp.inflight
	wp.inflight = map[int64]TaskJob{}
	closing := p.closing
	p.signalLocked()
	p.mu.Unlock()
	kind, msg := ErrWorkerExited, fmt.Sprintf("task worker %d (pid %d) exited (%s) while running it", wp.slot, wp.pid, describeExit(werr, readErr))
	if closing && wp.killed.Load() {
		kind, msg = ErrTaskShutdown, fmt.Sprintf("the server shut down before the task finished; task worker %d (pid %d) was stopped", wp.slot, wp.pid)
	}
	p.failAll(sortedJobs(held), kind, msg)
	return closing
}

func describeExit(werr, readErr error) string {
	if werr == nil {
		werr = errors.New("exit status 0")
	}
	if readErr != nil && readErr != io.EOF {
		return fmt.Sprintf("%v, after a protocol error: %v", werr, readErr)
	}
	return werr.Error()
}

// startFailed fails the queued tasks when no worker is running, so that
// they do not wait forever for workers that cannot start.
func (p *localPool) startFailed(err error) {
	p.mu.Lock()
	for _, wp := range p.procs {
		if wp != nil {
			p.mu.Unlock()
			return
		}
	}
	jobs := p.pending
	p.pending = nil
	p.signalLocked()
	p.mu.Unlock()
	p.failAll(jobs, ErrWorkerExited, "no task worker is running: "+err.Error())
}

func (p *localPool) failAll(jobs []TaskJob, kind error, msg string) {
	for _, j := range jobs {
		p.finish(TaskOutcome{ID: j.ID, Handler: j.Handler, Err: &TaskError{ID: j.ID, Handler: j.Handler, Kind: kind, Msg: msg}})
	}
}

func sortedJobs(m map[int64]TaskJob) []TaskJob {
	jobs := make([]TaskJob, 0, len(m))
	for _, j := range m {
		jobs = append(jobs, j)
	}
	sort.Slice(jobs, func(i, k int) bool { return jobs[i].ID < jobs[k].ID })
	return jobs
}

// Dispatch queues the task and hands it to a worker if one can take it.
func (p *localPool) Dispatch(job TaskJob) error {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		return ErrTasksStopped
	}
	p.pending = append(p.pending, job)
	sends := p.pumpLocked()
	p.mu.Unlock()
	p.send(sends)
	return nil
}

type sendItem struct {
	wp  *workerProc
	job TaskJob
}

// pumpLocked moves queued tasks to workers with room, the least loaded
// first; the caller sends them after unlocking.
func (p *localPool) pumpLocked() []sendItem {
	var sends []sendItem
	for len(p.pending) > 0 {
		wp := p.pickLocked()
		if wp == nil {
			break
		}
		job := p.pending[0]
		p.pending[0] = TaskJob{}
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
func (p *localPool) pickLocked() *workerProc {
	var best *workerProc
	for k := 0; k < p.n; k++ {
		wp := p.procs[(p.rr+k)%p.n]
		if wp == nil || wp.stopping || (!p.coroutine && len(wp.inflight) > 0) {
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
func (p *localPool) send(items []sendItem) {
	for _, it := range items {
		name := strings.TrimPrefix(it.job.Handler, "/task/")
		err := it.wp.w.Write(&taskproto.Message{Kind: taskproto.KindRun, ID: it.job.ID, Task: name, Args: it.job.Args, Trace: it.job.TraceContext})
		if err != nil {
			p.log.Warn("task worker does not take tasks; stopping it", "worker", it.wp.slot, "pid", it.wp.pid, "err", err)
			it.wp.kill()
		}
	}
}

func (p *localPool) signalLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// busyLocked reports whether any task is queued or running.
func (p *localPool) busyLocked() bool {
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
// their tasks fail with ErrTaskShutdown.
func (p *localPool) Shutdown(ctx context.Context) error {
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
	p.mu.Lock()
	jobs := p.pending
	p.pending = nil
	procs := append([]*workerProc(nil), p.procs...)
	for _, wp := range procs {
		if wp != nil {
			wp.stopping = true
		}
	}
	p.mu.Unlock()
	p.failAll(jobs, ErrTaskShutdown, "the server shut down before the task started")
	for _, wp := range procs {
		if wp == nil {
			continue
		}
		var werr error
		if err != nil {
			werr = wp.w.Write(&taskproto.Message{Kind: taskproto.KindCancel})
		}
		if werr == nil {
			werr = wp.w.Write(&taskproto.Message{Kind: taskproto.KindStop})
		}
		if werr != nil {
			wp.kill()
		}
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
			if wp != nil {
				wp.kill()
			}
		}
		<-done
	}
	return err
}

// drain waits until no task is queued or running, or ctx is done.
func (p *localPool) drain(ctx context.Context) error {
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

// pids lists the running workers' process ids.
func (p *localPool) pids() []int {
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
