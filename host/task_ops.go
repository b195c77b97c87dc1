package host

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/zealgo/zealgo/internal/taskpool"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tasks seen by operations: their metrics, their readiness, and the trace
// that travels with them from the request that dispatched them to the
// worker that runs them.

// dispatching returns the engine's observer of a task about to be handed
// to the backend (taskpool.Engine.DispatchObserved), or nil when there is
// nothing to observe: it counts the task and gives it the caller's trace
// context, in its Meta; the func it returns is called with the outcome of
// the hand-over.
func (t *tasks) dispatching(ctx context.Context) func(job *taskpool.Job) func(error) {
	m := t.ops.metrics
	sc := trace.SpanContextFromContext(ctx)
	if m == nil && !sc.IsValid() {
		return nil
	}
	return func(job *taskpool.Job) func(error) { return t.dispatched(ctx, m, job) }
}

// dispatched is dispatching's observer of one task.
func (t *tasks) dispatched(ctx context.Context, m *metrics, job *taskpool.Job) func(error) {
	var span trace.Span
	if trace.SpanContextFromContext(ctx).IsValid() {
		if t.ops.tracer != nil {
			ctx, span = t.ops.tracer.Start(ctx, "dispatch "+taskFile(job.Handler), trace.WithSpanKind(trace.SpanKindProducer),
				trace.WithAttributes(attribute.Int64("zealgo.task.id", job.ID)))
		}
		if job.Meta == nil {
			job.Meta = map[string]string{}
		}
		propagator.Inject(ctx, propagation.MapCarrier(job.Meta))
	}
	if m != nil {
		m.taskStarts.Store(job.ID, time.Now())
		m.tasksInProgress.Inc()
	}
	return func(err error) {
		if m != nil {
			if err != nil {
				m.taskStarts.Delete(job.ID)
				m.tasksInProgress.Dec()
			} else {
				m.tasksDispatched.WithLabelValues(job.Handler).Inc()
			}
		}
		if span != nil {
			endSpan(span, err)
		}
	}
}

// observeFinish counts each finished task before next handles it.
func (t *tasks) observeFinish(next func(taskpool.Outcome)) func(taskpool.Outcome) {
	m := t.ops.metrics
	if m == nil {
		return next
	}
	return func(o taskpool.Outcome) {
		m.tasksFinished.WithLabelValues(o.Handler, outcomeName(o)).Inc()
		if start, ok := m.taskStarts.LoadAndDelete(o.ID); ok {
			m.tasksInProgress.Dec()
			m.taskDuration.WithLabelValues(o.Handler).Observe(time.Since(start.(time.Time)).Seconds())
		}
		next(o)
	}
}

// taskOutcomes name the kinds of TaskError in metrics.
var taskOutcomes = []struct {
	kind error
	name string
}{
	{ErrTaskFailed, "error"}, {ErrTaskPanicked, "panic"}, {ErrTaskArgs, "args"}, {ErrTaskLoad, "load"},
	{ErrTaskResult, "result"}, {ErrWorkerExited, "worker_exited"}, {ErrTaskShutdown, "shutdown"},
}

// taskOutcome names a task's outcome: ok, or the kind of its failure.
func taskOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	for _, o := range taskOutcomes {
		if errors.Is(err, o.kind) {
			return o.name
		}
	}
	return "other"
}

// outcomeName names the outcome of a finished task (taskOutcome).
func outcomeName(o taskpool.Outcome) string {
	if o.Fail == "" {
		return "ok"
	}
	return taskOutcome(taskError(o))
}

// taskFile names a task's file, "task/<name>.go", from "/task/<name>".
func taskFile(handler string) string {
	return strings.TrimPrefix(handler, "/") + ".go"
}

// startTaskSpan starts, in a worker, the span of the task c runs: a child
// of the dispatcher's span when c carries a trace context in its Meta.
// The returned func ends it; when the task carried a trace, it also logs
// a debug record of the run, with the trace id.
func (o *opsState) startTaskSpan(ctx context.Context, log *slog.Logger, m taskpool.Call) (context.Context, func(fail string, err error)) {
	if m.Meta["traceparent"] == "" || o.tracer == nil {
		return ctx, func(string, error) {}
	}
	ctx = propagator.Extract(ctx, propagation.MapCarrier(m.Meta))
	file := "task/" + m.Task + ".go"
	ctx, span := o.tracer.Start(ctx, "run "+file, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.Int64("zealgo.task.id", m.ID), attribute.String("zealgo.file", file)))
	start := time.Now()
	return ctx, func(fail string, err error) {
		outcome := "ok"
		if err != nil {
			outcome = fail
		}
		log.LogAttrs(ctx, slog.LevelDebug, "task run", slog.Int64("id", m.ID), slog.String("task", "/task/"+m.Task),
			slog.String("outcome", outcome), slog.Duration("duration", time.Since(start)))
		endSpan(span, err)
	}
}
