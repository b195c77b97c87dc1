package taskpool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zealgo/zealgo/internal/taskproto"
)

// workerProc is one running worker process.
type workerProc struct {
	slot     int
	pid      int
	cmd      *exec.Cmd
	w        *taskproto.Writer
	r        *taskproto.Reader
	stdin    *os.File // our end of its standard input
	stdout   *os.File // our end of its standard output
	inflight map[int64]Job
	stopping bool // sent Stop
	started  time.Time
	killed   atomic.Bool
	reaped   atomic.Bool // Wait returned: the pid may belong to another process now
}

// Start starts every worker and waits until each is ready.
func (p *Pool) Start(finish func(Outcome)) error {
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
	p.log.Info("task workers started", "workers", p.n, "coroutine", p.cfg.Coroutine, "pids", pids)
	return nil
}

// spawn starts the worker of slot and waits for its Ready message.
func (p *Pool) spawn(slot int) (*workerProc, error) {
	cmd := p.cfg.Command()
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
		inflight: map[int64]Job{}, started: time.Now()}
	if err := p.handshake(wp); err != nil {
		wp.kill()
		if werr := p.reap(wp, nil); werr != nil {
			err = fmt.Errorf("%w (%v)", err, werr)
		}
		return nil, fmt.Errorf("zealgo: task worker %d (pid %d, %s) did not start: %w; its output is in the log",
			slot, wp.pid, strings.Join(cmd.Args, " "), err)
	}
	p.log.Debug("task worker ready", "worker", slot, "pid", wp.pid)
	return wp, nil
}

// handshake sends the worker its configuration and reads its Ready
// message, killing it if that takes longer than workerHandshake.
func (p *Pool) handshake(wp *workerProc) error {
	wc := p.cfg.Worker
	wc.Slot = wp.slot
	cfg, err := json.Marshal(wc)
	if err != nil {
		return err
	}
	timer := time.AfterFunc(workerHandshake, wp.kill)
	defer timer.Stop()
	if err := wp.w.Write(&taskproto.Message{Kind: taskproto.KindInit, Config: cfg}); err != nil {
		return err
	}
	m, err := wp.r.Read()
	if err != nil {
		return err
	}
	if m.Kind != taskproto.KindReady || m.Version != taskproto.Version {
		return fmt.Errorf("it answered %s version %d, want ready version %d", m.Kind, m.Version, taskproto.Version)
	}
	return nil
}

// kill stops the worker and whatever it started, at once.
func (wp *workerProc) kill() {
	if wp.reaped.Load() {
		return
	}
	wp.killed.Store(true)
	killWorker(wp.cmd.Process)
}

// stop asks the worker to exit once its tasks are done, after cancelling
// their contexts if cancel is set; a worker that cannot be asked is
// killed.
func (wp *workerProc) stop(cancel bool) {
	var err error
	if cancel {
		err = wp.w.Write(&taskproto.Message{Kind: taskproto.KindCancel})
	}
	if err == nil {
		err = wp.w.Write(&taskproto.Message{Kind: taskproto.KindStop})
	}
	if err != nil {
		wp.kill()
	}
}

// reap waits for the worker to exit, after its output ended, and closes
// our ends of its pipes. readErr is why the output ended.
func (p *Pool) reap(wp *workerProc, readErr error) error {
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
func (p *Pool) supervise(slot int, wp *workerProc) {
	defer p.wg.Done()
	quick := 0
	for {
		readErr := p.serve(wp)
		werr := p.reap(wp, readErr)
		lived := time.Since(wp.started)
		if p.exited(wp, werr, readErr) {
			return
		}
		if lived < time.Second {
			quick++
		} else {
			quick = 0
		}
		p.log.Warn("task worker exited; restarting it", "worker", slot, "pid", wp.pid, "status", describeExit(werr, readErr))
		if wp = p.restart(slot, &quick); wp == nil {
			return
		}
	}
}

// restart starts a new worker in slot, waiting longer after each quick
// death, until one starts or the pool closes (then it returns nil).
func (p *Pool) restart(slot int, quick *int) *workerProc {
	for {
		if !p.sleep(restartDelay(*quick)) {
			return nil
		}
		wp, err := p.spawn(slot)
		if err == nil {
			if !p.install(wp) {
				wp.kill()
				p.reap(wp, nil)
				return nil
			}
			return wp
		}
		*quick++
		p.log.Error("task worker could not restart", "worker", slot, "err", err)
		p.startFailed(err)
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
func (p *Pool) sleep(d time.Duration) bool {
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
func (p *Pool) install(wp *workerProc) bool {
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
func (p *Pool) serve(wp *workerProc) error {
	for {
		m, err := wp.r.Read()
		if err != nil {
			return err
		}
		if m.Kind == taskproto.KindCall {
			go p.answer(wp, m) // calls.go
			continue
		}
		if m.Kind != taskproto.KindDone {
			p.log.Warn("task worker sent an unexpected message", "worker", wp.slot, "pid", wp.pid, "kind", m.Kind.String())
			continue
		}
		p.done(wp, m)
	}
}

// done takes the report of a finished task.
func (p *Pool) done(wp *workerProc, m *taskproto.Message) {
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
	if m.Fail != "" || m.Err != "" {
		fail := m.Fail
		if fail == "" {
			fail = taskproto.FailError
		}
		p.finish(Failed(job, fail, m.Err))
		return
	}
	p.finish(Outcome{ID: job.ID, Handler: job.Handler, Result: m.Result})
}

// exited takes a dead worker out and fails the tasks it held. It reports
// whether the pool is closing.
func (p *Pool) exited(wp *workerProc, werr, readErr error) bool {
	p.mu.Lock()
	if p.procs[wp.slot] == wp {
		p.procs[wp.slot] = nil
	}
	held := wp.inflight
	wp.inflight = map[int64]Job{}
	closing := p.closing
	p.signalLocked()
	p.mu.Unlock()
	fail, msg := taskproto.FailExited, fmt.Sprintf("task worker %d (pid %d) exited (%s) while running it", wp.slot, wp.pid, describeExit(werr, readErr))
	if closing && wp.killed.Load() {
		fail, msg = taskproto.FailShutdown, fmt.Sprintf("the server shut down before the task finished; task worker %d (pid %d) was stopped", wp.slot, wp.pid)
	}
	p.failAll(sortedJobs(held), fail, msg)
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
func (p *Pool) startFailed(err error) {
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
	p.failAll(jobs, taskproto.FailExited, "no task worker is running: "+err.Error())
}

func (p *Pool) failAll(jobs []Job, fail, msg string) {
	for _, j := range jobs {
		p.finish(Failed(j, fail, msg))
	}
}

func sortedJobs(m map[int64]Job) []Job {
	jobs := make([]Job, 0, len(m))
	for _, j := range m {
		jobs = append(jobs, j)
	}
	sort.Slice(jobs, func(i, k int) bool { return jobs[i].ID < jobs[k].ID })
	return jobs
}
