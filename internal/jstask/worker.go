package jstask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Runner runs one task: deliveries is 1 on the first delivery and more
// when the task is delivered again (its earlier worker died or stalled).
// ctx is cancelled at the worker's shutdown deadline and after
// WorkerConfig.MaxRunTime. The result must be JSON; a *TaskError
// returned keeps its Kind, any other error is KindError.
type Runner func(ctx context.Context, t Task, deliveries int) (json.RawMessage, error)

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	Config
	// Concurrency is how many tasks this worker runs at once: 1 (the
	// default) runs them one at a time, more runs each in a goroutine of
	// its own (the coroutine mode). A worker pulls only the tasks it has
	// room for, so none waits in it while another could run it.
	Concurrency int
	// MaxRunTime, when set, bounds a task: its context is cancelled
	// then, and a task that still runs stops renewing its
	// acknowledgement deadline, so that it is delivered again.
	MaxRunTime time.Duration
	// Recycle is called when a task still runs a second after its time
	// limit (Config.Timeout, Task.Timeout), once the task has counted an
	// attempt: the worker cannot stop it, so its process should end
	// (the default: os.Exit(3)) and be replaced. The worker first gives
	// its other running tasks back to the queue.
	Recycle func()
	// Grace is how long running tasks may go on after Run's context is
	// done before their contexts are cancelled; default 10s.
	Grace time.Duration
	// PollWait is how long one pull for tasks waits on the server;
	// default 5s.
	PollWait time.Duration
	// Limits, when set, returns the attempts, backoff and time limit of
	// a task's handler (its file's own): they override Config's, and a
	// Task's own override them.
	Limits func(handler string) Limits
}

// Limits are a task's attempts, backoff and time limit; a zero field
// leaves the setting to the next level (Config).
type Limits struct {
	Attempts int
	Backoff  time.Duration
	Timeout  time.Duration
}

// Worker pulls tasks from the work queue and runs them.
type Worker struct {
	js      jetstream.JetStream
	cfg     WorkerConfig
	n       names
	streams []string             // the task streams read (workerStreams)
	cons    []jetstream.Consumer // their workers' consumers
	down    []time.Time          // per task stream: passed over until then, after a failed pull
	turn    int                  // the task stream pulled from next
	results jetstream.Stream

	mu       sync.Mutex
	inflight map[jetstream.Msg]struct{}
	recycled sync.Once
	careful  atomic.Bool        // tasks delivered again came: pull one at a time
	runs     jetstream.KeyValue // the runs alone of each task delivered again
	resq     *resultQueue       // set by Run
	gos      *goPool            // runs the tasks (gopool.go)
	renew    *renewer           // renews the running tasks' deadlines (renew.go)
	maybe    *maybeRanges       // set by Run: tasks a crashed server may have delivered (crash.go)
}

// NewWorker creates or updates the streams and the workers' consumer.
func NewWorker(ctx context.Context, js jetstream.JetStream, cfg WorkerConfig) (*Worker, error) {
	var err error
	if cfg.Config, err = cfg.Config.withDefaults(); err != nil {
		return nil, err
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.PollWait <= 0 {
		cfg.PollWait = 5 * time.Second
	}
	if cfg.Recycle == nil {
		cfg.Recycle = func() { os.Exit(3) }
	}
	if err := setupStreams(ctx, js, cfg.Config); err != nil {
		return nil, err
	}
	w := &Worker{js: js, cfg: cfg, n: cfg.names(), inflight: make(map[jetstream.Msg]struct{}), gos: newGoPool()}
	w.renew = newRenewer(cfg.AckWait/3, func(err error) { w.cfg.Logger.Debug("zealgo: jstask: renew task", "err", err) })
	if w.streams, err = workerStreams(ctx, js, cfg.Config); err != nil {
		return nil, err
	}
	for _, name := range w.streams {
		cons, err := ensureWorkers(ctx, js, cfg.Config, name)
		if err != nil {
			return nil, err
		}
		w.cons = append(w.cons, cons)
	}
	w.down = make([]time.Time, len(w.streams))
	if w.results, err = js.Stream(ctx, w.n.results); err != nil {
		return nil, fmt.Errorf("zealgo: jstask: stream %s: %w", w.n.results, err)
	}
	if w.runs, err = js.KeyValue(ctx, w.n.runs); err != nil {
		return nil, fmt.Errorf("zealgo: jstask: bucket %s: %w", w.n.runs, err)
	}
	return w, nil
}

// Run pulls and runs tasks until ctx is done, then lets the running ones
// finish within WorkerConfig.Grace, cancels their contexts, and returns
// a second later. A task still running then goes back to the queue. Run
// returns an error when the NATS connection is closed.
func (w *Worker) Run(ctx context.Context, run Runner) error {
	if run == nil {
		return errors.New("zealgo: jstask: Worker.Run needs a runner")
	}
	taskCtx, cancelTasks := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelTasks()
	slots := make(chan struct{}, w.cfg.Concurrency)
	var wg sync.WaitGroup
	var running sync.RWMutex // held for reading by each task, for writing by a task run alone
	w.resq = w.startResults()
	w.renew.start()
	defer w.renew.close()
	w.maybe = watchMaybe(ctx, w.runs)
	defer w.maybe.stop()
	err := w.pull(ctx, slots, func(m jetstream.Msg, batch bool) {
		suspect := w.suspect(m)
		switch {
		case suspect && batch:
			// A task delivered again may have killed its worker: it goes
			// back, to be pulled alone (careful).
			// Not before this pull ends, lest it come back in the same one.
			w.careful.Store(true)
			_ = m.NakWithDelay(w.cfg.PollWait + 100*time.Millisecond)
			<-slots
			return
		case suspect:
			// Pulled alone, it runs alone, once the others have returned,
			// so that it takes none with it if it kills its worker again.
			running.Lock()
			w.handleAlone(taskCtx, m, run)
			running.Unlock()
			<-slots
			return
		}
		w.careful.Store(false)
		running.RLock()
		wg.Add(1)
		w.gos.run(func() {
			defer wg.Done()
			defer func() { <-slots }()
			defer running.RUnlock()
			w.handle(taskCtx, m, run)
		})
	})
	w.drain(&wg, cancelTasks)
	w.resq.close()
	return err
}

// pull fetches as many tasks as there are free slots, from each task
// stream in turn, and starts each, until ctx is done or the connection
// is closed. A stream whose pull fails (no leader) is passed over for a
// while; when every stream fails, pulls pause, and after a few failed
// rounds the consumers are created again, in case the server lost them.
func (w *Worker) pull(ctx context.Context, slots chan struct{}, start func(m jetstream.Msg, batch bool)) error {
	pause, failed := 50*time.Millisecond, 0
	for {
		n := acquire(ctx, slots)
		if n == 0 {
			return nil
		}
		if n > 1 && w.careful.Load() {
			for range n - 1 {
				<-slots
			}
			n = 1
		}
		i := w.nextStream()
		got, err := w.fetch(ctx, i, n, func(m jetstream.Msg) { start(m, n > 1) })
		for range n - got {
			<-slots
		}
		switch {
		case err == nil:
			pause, failed = 50*time.Millisecond, 0
			continue
		case errors.Is(err, nats.ErrConnectionClosed):
			return fmt.Errorf("zealgo: jstask: pull tasks: %w", err)
		}
		w.cfg.Logger.Debug("zealgo: jstask: pull tasks", "stream", w.streams[i], "err", err)
		w.down[i] = time.Now().Add(downFor)
		if w.anyUp() {
			continue
		}
		if failed++; failed%3 == 0 {
			w.reensure(ctx)
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// nextStream returns the task stream to pull from next: the next in turn
// that did not fail lately, else the next in turn.
func (w *Worker) nextStream() int {
	now := time.Now()
	for range w.streams {
		i := w.turn % len(w.streams)
		w.turn++
		if !now.Before(w.down[i]) {
			return i
		}
	}
	i := w.turn % len(w.streams)
	w.turn++
	return i
}

// anyUp reports whether a task stream did not fail lately.
func (w *Worker) anyUp() bool {
	now := time.Now()
	for _, d := range w.down {
		if !now.Before(d) {
			return true
		}
	}
	return false
}

// suspect reports whether the server delivered m before for another
// reason than a retry of a failure (markRetry): its worker may have died
// of it.
func (w *Worker) suspect(m jetstream.Msg) bool {
	meta, err := m.Metadata()
	if err != nil || meta.NumDelivered <= 1 {
		return false
	}
	id := m.Headers().Get(hdrID)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := w.runs.Get(ctx, "retry-"+id)
	return err != nil || string(e.Value()) != strconv.FormatUint(meta.NumDelivered-1, 10)
}

// markRetry records that delivery n of the task id goes back to the
// queue as a retry, so that its next delivery is no suspect.
func (w *Worker) markRetry(id int64, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := w.runs.Put(ctx, "retry-"+strconv.FormatInt(id, 10), []byte(strconv.Itoa(n))); err != nil {
		w.cfg.Logger.Debug("zealgo: jstask: mark a retry", "id", id, "err", err)
	}
}

// reensure creates the workers' consumer again if it is missing; a lost
// stream is logged with what to do, not created.
func (w *Worker) reensure(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := checkStreams(ctx, w.js, w.cfg.Config); err != nil {
		if errors.Is(err, ErrStreamLost) {
			w.cfg.Logger.Error(err.Error())
		}
		return
	}
	for i, name := range w.streams {
		if cons, err := ensureWorkers(ctx, w.js, w.cfg.Config, name); err == nil {
			w.cons[i] = cons
		}
	}
}

// acquire waits for one free slot and takes every other free one; it
// returns how many it took, 0 when ctx is done.
func acquire(ctx context.Context, slots chan struct{}) int {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for n < cap(slots) {
		select {
		case slots <- struct{}{}:
			n++
		default:
			return n
		}
	}
	return n
}

// multiPollWait bounds one pull's wait on one of several task streams,
// so that a task in another waits no longer for a free worker.
const multiPollWait = 100 * time.Millisecond

// fetch pulls up to n tasks from task stream i and starts each as it
// arrives. When ctx is done, tasks still on their way are given back to
// the queue.
func (w *Worker) fetch(ctx context.Context, i, n int, start func(jetstream.Msg)) (int, error) {
	wait := w.cfg.PollWait
	if len(w.cons) > 1 {
		wait = min(wait, multiPollWait)
	}
	batch, err := w.cons[i].Fetch(n, jetstream.FetchMaxWait(wait))
	if err != nil {
		return 0, err
	}
	got := 0
	for {
		select {
		case m, ok := <-batch.Messages():
			if !ok {
				return got, batch.Error()
			}
			got++
			start(m)
		case <-ctx.Done():
			go func() {
				for m := range batch.Messages() {
					_ = m.Nak()
				}
			}()
			return got, nil
		}
	}
}

// drain waits for the running tasks, cancels their contexts after the
// grace, and gives back to the queue those that do not return.
func (w *Worker) drain(wg *sync.WaitGroup, cancelTasks context.CancelFunc) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-time.After(w.cfg.Grace):
	}
	cancelTasks()
	select {
	case <-done:
		return
	case <-time.After(time.Second):
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for m := range w.inflight {
		_ = m.Nak()
	}
}

// track and untrack keep the set of running tasks' messages.
func (w *Worker) track(m jetstream.Msg) {
	w.mu.Lock()
	w.inflight[m] = struct{}{}
	w.mu.Unlock()
}

func (w *Worker) untrack(m jetstream.Msg) {
	w.mu.Lock()
	delete(w.inflight, m)
	w.mu.Unlock()
}
