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
	// PollWait is how long one pull for tasks waits on the server, and
	// so how long a task delivered again waits to be pulled alone;
	// default 5s, or AckWait when shorter (a task is then delivered
	// again, and pulled alone, within about two AckWaits).
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
	streams []string                 // the task streams read (workerStreams)
	cmu     sync.Mutex               // guards cons: a stream's pull loop may create its consumer again
	cons    []jetstream.Consumer     // their workers' consumers
	rmu     sync.Mutex               // guards results
	results map[int]jetstream.Stream // the results streams looked up (resultsStream)

	mu       sync.Mutex
	inflight map[jetstream.Msg]struct{}
	recycled sync.Once
	careful  atomic.Bool        // tasks delivered again came: pull one at a time
	runs     jetstream.KeyValue // the runs alone of each task delivered again
	resq     *resultQueue       // set by Run
	gos      *goPool            // runs the tasks (gopool.go)
	renew    *renewer           // renews the running tasks' deadlines (renew.go)
	maybe    *maybeRanges       // set by Run: tasks a crashed server may have delivered (crash.go)
	batched  *batchIndex        // the batched results, read when a task is delivered again (batch.go)
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
		cfg.PollWait = min(5*time.Second, cfg.AckWait)
	}
	if cfg.Recycle == nil {
		cfg.Recycle = func() { os.Exit(3) }
	}
	if err := setupStreams(ctx, js, cfg.Config); err != nil {
		return nil, err
	}
	w := &Worker{js: js, cfg: cfg, n: cfg.names(), inflight: make(map[jetstream.Msg]struct{}), gos: newGoPool()}
	w.batched = newBatchIndex(js, w.n)
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
	w.results = map[int]jetstream.Stream{}
	if _, err := w.resultsStream(ctx, 0); err != nil {
		return nil, err
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

// pull fetches tasks into free slots and starts each, until ctx is done
// or the connection is closed: from every task stream at once, one pull
// loop each, so that a task waits for no pull on another stream (a loop
// pulling the streams in turn kept a task in the queue up to a pull's
// wait: round trips through serve fell from 691/s to 131/s with 3
// streams). Each loop pulls at most its share of the slots at a time, so
// that a pull waiting on an empty stream holds no slot another stream's
// tasks need.
func (w *Worker) pull(ctx context.Context, slots chan struct{}, start func(m jetstream.Msg, batch bool)) error {
	k := len(w.streams)
	share := max(1, (cap(slots)+k-1)/k)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, k)
	for i := range k {
		go func() { errs <- w.pullStream(ctx, i, share, slots, start) }()
	}
	var first error
	for range k {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

// pullStream is the pull loop of task stream i, taking at most share
// slots per pull. A failed pull (no leader) pauses the loop, longer each
// time, and every third one in a row creates the stream's consumer again,
// in case the server lost it.
func (w *Worker) pullStream(ctx context.Context, i, share int, slots chan struct{}, start func(m jetstream.Msg, batch bool)) error {
	pause, failed := 50*time.Millisecond, 0
	for {
		n := acquire(ctx, slots, share)
		if n == 0 {
			return nil
		}
		if n > 1 && w.careful.Load() {
			for range n - 1 {
				<-slots
			}
			n = 1
		}
		got, err := w.fetch(ctx, i, n, cap(slots), func(m jetstream.Msg) { start(m, n > 1) })
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
		if failed++; failed%3 == 0 {
			w.reensure(ctx, i)
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
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

// resultsStream returns results stream i, looked up once.
func (w *Worker) resultsStream(ctx context.Context, i int) (jetstream.Stream, error) {
	i = max(i, 0)
	w.rmu.Lock()
	defer w.rmu.Unlock()
	if st, ok := w.results[i]; ok {
		return st, nil
	}
	name, _ := w.n.resultStream(i)
	st, err := w.js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("zealgo: jstask: stream %s: %w", name, err)
	}
	w.results[i] = st
	return st, nil
}

// reensure creates the consumer of task stream i again if it is missing;
// a lost stream is logged with what to do, not created.
func (w *Worker) reensure(ctx context.Context, i int) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := checkStreams(ctx, w.js, w.cfg.Config); err != nil {
		if errors.Is(err, ErrStreamLost) {
			w.cfg.Logger.Error(err.Error())
		}
		return
	}
	if cons, err := ensureWorkers(ctx, w.js, w.cfg.Config, w.streams[i]); err == nil {
		w.cmu.Lock()
		w.cons[i] = cons
		w.cmu.Unlock()
	}
}

// acquire waits for one free slot and takes other free ones, up to most
// in all; it returns how many it took, 0 when ctx is done.
func acquire(ctx context.Context, slots chan struct{}, most int) int {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for n < most {
		select {
		case slots <- struct{}{}:
			n++
		default:
			return n
		}
	}
	return n
}

// multiPollWait bounds one pull's wait when a worker has fewer slots than
// task streams: a pull waiting on an empty stream then holds a slot that
// another stream's task needs.
const multiPollWait = 100 * time.Millisecond

// fetch pulls up to n tasks from task stream i and starts each as it
// arrives; slots is how many the worker has. When ctx is done, tasks
// still on their way are given back to the queue.
func (w *Worker) fetch(ctx context.Context, i, n, slots int, start func(jetstream.Msg)) (int, error) {
	wait := w.cfg.PollWait
	if slots < len(w.streams) {
		wait = min(wait, multiPollWait)
	}
	w.cmu.Lock()
	cons := w.cons[i]
	w.cmu.Unlock()
	batch, err := cons.Fetch(n, jetstream.FetchMaxWait(wait))
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
