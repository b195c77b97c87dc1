package taskpool

import (
	"context"
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

// TraceKeys are the keys of Job.Meta (and Call.Meta) that hold the
// dispatcher's W3C trace context, as an OpenTelemetry propagation.MapCarrier
// writes them; a backend that does not carry Meta whole carries these.
var TraceKeys = []string{"traceparent", "tracestate"}

// traceOf returns the trace context in meta, or nil.
func traceOf(meta map[string]string) map[string]string {
	var out map[string]string
	for _, k := range TraceKeys {
		if v := meta[k]; v != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
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

// Ready reports whether the backend's worker processes run, which pull
// its tasks (Readiness); the host checks the NATS connection itself.
func (b *JetStream) Ready(ctx context.Context) error {
	if b.closing.Load() {
		return ErrStopped
	}
	return b.pool.Ready(ctx)
}
