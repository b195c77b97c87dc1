package taskpool

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Engine is the dispatching server's side of tasks: the running backend,
// the task ids, and the queue that hands each task's end to the finish
// callback, one at a time. Its zero value is ready to Start.
type Engine struct {
	running atomic.Pointer[backendRef] // nil until started
	seq     atomic.Int64
	stop    sync.Once
	log     *slog.Logger
	fin     finishQueue
}

// backendRef holds the running backend.
type backendRef struct{ b Backend }

// ErrNotStarted is returned by Dispatch before Start.
var ErrNotStarted = errors.New("zealgo: task workers have not started")

// Start starts b, which then carries every task. finish receives each
// task's end, one call at a time, in the order tasks finish, on a
// goroutine of the engine's own so that a slow callback does not hold up
// the backend, or, for a Durable backend, on the backend's goroutine
// before it acknowledges the end; a panic in it is logged to log.
func (e *Engine) Start(b Backend, finish func(Outcome), log *slog.Logger) error {
	e.log = log
	e.fin.call, e.fin.log = finish, log
	report := e.fin.push
	if _, ok := b.(Durable); ok {
		report = e.fin.run
	}
	if err := b.Start(report); err != nil {
		return err
	}
	e.running.Store(&backendRef{b})
	return nil
}

// Started reports whether the engine has a running backend.
func (e *Engine) Started() bool { return e.backend() != nil }

func (e *Engine) backend() Backend {
	if r := e.running.Load(); r != nil {
		return r.b
	}
	return nil
}

// Dispatch gives the task a new id (from a Durable backend, else the
// engine's own sequence) and hands it to the backend; ctx bounds the wait
// for the backend to accept it. handler and args must have been checked
// (taskproto.EncodeArgs).
func (e *Engine) Dispatch(ctx context.Context, handler string, args json.RawMessage, meta map[string]string) (int64, error) {
	return e.DispatchObserved(ctx, handler, args, meta, nil)
}

// DispatchObserved is Dispatch that shows the job, its id given, to
// observe before the backend gets it: observe may add to job.Meta, and the
// func it returns, if not nil, is called with the backend's answer. A
// task's end can reach the finish callback before Dispatch returns, so
// what counts a task in must happen here (metrics, the trace context: the
// host's operations). A nil observe is Dispatch.
func (e *Engine) DispatchObserved(ctx context.Context, handler string, args json.RawMessage, meta map[string]string,
	observe func(job *Job) func(error)) (int64, error) {
	b := e.backend()
	if b == nil {
		return 0, ErrNotStarted
	}
	var id int64
	if d, ok := b.(Durable); ok {
		var err error
		if id, err = d.NextID(ctx); err != nil {
			return 0, err
		}
	} else {
		id = e.seq.Add(1)
	}
	job := Job{ID: id, Handler: handler, Args: args, Meta: meta}
	var end func(error)
	if observe != nil {
		end = observe(&job)
	}
	var err error
	if k, ok := b.(keyed); ok && meta[MetaKey] != "" {
		id, err = k.DispatchKeyed(ctx, job)
	} else {
		err = b.Dispatch(ctx, job)
	}
	if end != nil {
		end(err)
	}
	if err != nil {
		return 0, err
	}
	return id, nil
}

// keyed is a Backend that drops a second task of the same idempotency key
// (Job.Meta[MetaKey]) and returns the first one's id.
type keyed interface {
	DispatchKeyed(ctx context.Context, job Job) (int64, error)
}

// Stop shuts the backend down once, waiting for running tasks and for
// their finish callbacks until ctx is done. The callbacks of the tasks
// failed at the deadline get at least two more seconds.
func (e *Engine) Stop(ctx context.Context) {
	e.stop.Do(func() {
		b := e.backend()
		if b == nil {
			return
		}
		if err := b.Shutdown(ctx); err != nil {
			e.log.Warn("zealgo: task workers shutdown", "err", err)
		}
		wctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if d, ok := ctx.Deadline(); ok && time.Until(d) > 2*time.Second {
			wctx = ctx
		}
		e.fin.wait(wctx)
	})
}

// PIDs returns the process ids of the backend's local worker processes,
// in worker order; none when the backend runs none.
func (e *Engine) PIDs() []int {
	if p, ok := e.backend().(interface{ PIDs() []int }); ok {
		return p.PIDs()
	}
	return nil
}
