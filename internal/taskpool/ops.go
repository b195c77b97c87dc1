package taskpool

import (
	"context"
	"encoding/json"
	"errors"
)

// What operations see of the engine: whether it can run tasks (the
// readiness check), how many wait (a metric), and each task as it is
// handed over (metrics and the trace context that travels in Job.Meta).

// Readiness is implemented by a Backend that can tell whether it is able
// to run tasks. Pool is ready while it accepts tasks and at least one of
// its worker processes runs.
type Readiness interface {
	// Ready returns nil when tasks dispatched now would run, or why not.
	Ready(ctx context.Context) error
}

// Queue is implemented by a Backend that can tell how many tasks wait
// for a worker.
type Queue interface {
	Queued() int
}

// ErrNoWorker is Pool's readiness error while none of its workers runs.
var ErrNoWorker = errors.New("zealgo: no task worker is running")

// Ready reports whether the running backend can run tasks: ErrNotStarted
// before Start; nil for a backend that cannot tell (Readiness).
func (e *Engine) Ready(ctx context.Context) error {
	b := e.backend()
	if b == nil {
		return ErrNotStarted
	}
	if r, ok := b.(Readiness); ok {
		return r.Ready(ctx)
	}
	return nil
}

// Queued returns the number of tasks waiting for a worker; 0 before Start
// and for a backend that cannot tell (Queue).
func (e *Engine) Queued() int {
	if q, ok := e.backend().(Queue); ok {
		return q.Queued()
	}
	return 0
}

// DispatchObserved is Dispatch that shows the job, its id given, to
// observe before the backend gets it: observe may add to job.Meta, and the
// func it returns, if not nil, is called with the backend's answer. A
// task's end can reach the finish callback before Dispatch returns, so
// what counts a task in must happen here. A nil observe is Dispatch.
func (e *Engine) DispatchObserved(handler string, args json.RawMessage, meta map[string]string, observe func(job *Job) func(error)) (int64, error) {
	b := e.backend()
	if b == nil {
		return 0, ErrNotStarted
	}
	job := Job{ID: e.seq.Add(1), Handler: handler, Args: args, Meta: meta}
	var end func(error)
	if observe != nil {
		end = observe(&job)
	}
	err := b.Dispatch(job)
	if end != nil {
		end(err)
	}
	if err != nil {
		return 0, err
	}
	return job.ID, nil
}

// Ready reports whether the pool takes tasks and at least one of its
// worker processes runs (Readiness).
func (p *Pool) Ready(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return ErrStopped
	}
	for _, wp := range p.procs {
		if wp != nil && !wp.stopping {
			return nil
		}
	}
	return ErrNoWorker
}

// Queued returns the number of tasks waiting for a worker (Queue).
func (p *Pool) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}
