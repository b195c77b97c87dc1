package host

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Tracing with OpenTelemetry. It is off unless Config.Ops.TracerProvider
// is set or the standard variables ask for it: OTEL_TRACES_EXPORTER=otlp,
// or OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
// set; OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none keep it off.
// The exporter is OTLP over HTTP (protobuf), configured by the other
// OTEL_EXPORTER_OTLP_* variables; the service is named by
// OTEL_SERVICE_NAME (default "zealgo") and OTEL_RESOURCE_ATTRIBUTES;
// OTEL_TRACES_SAMPLER and OTEL_BSP_* apply as the SDK reads them.
//
// Each request gets a server span (otelhttp), joined to the caller's trace
// when the request carries a W3C traceparent, and named after the handler
// file that answered ("GET api/users.go"). A task dispatched with
// Server.TaskContext carries the trace to its worker (the W3C traceparent
// and tracestate in the task's Meta, taskpool.Job), where the task runs in a
// span of its own, a child of the request's. Log records written with a
// context that holds a span (slog.InfoContext(ctx, ...), the access log,
// the worker's records about a task) carry trace_id and span_id.

// tracerName names the tracer of the framework's spans.
const tracerName = "github.com/zealgo/zealgo/host"

// tracing is the application's tracer, nil when tracing is off.
type tracing struct {
	tp       trace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	shutdown func(context.Context) error // of a provider made here
}

// propagator carries the trace context: W3C traceparent and baggage.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// setupTracing makes the tracer, from Config.Ops.TracerProvider or the
// environment, and makes the log carry trace ids.
func (o *opsState) setupTracing(cfg *OpsConfig, log *slog.Logger) (*slog.Logger, error) {
	tp := cfg.TracerProvider
	if tp == nil {
		sdk, err := tracerFromEnv(context.Background())
		if err != nil || sdk == nil {
			return log, err
		}
		tp, o.shutdown = sdk, sdk.Shutdown
		log.Info("zealgo: tracing on (OpenTelemetry, OTLP over HTTP)")
	}
	o.tp, o.tracer, o.prop = tp, tp.Tracer(tracerName), propagator
	o.access = slog.New(traceLogHandler{o.access.Handler()})
	return slog.New(traceLogHandler{log.Handler()}), nil
}

// shutdownTracing flushes and stops a provider made here.
func (o *opsState) shutdownTracing(ctx context.Context) error {
	if f := o.shutdown; f != nil {
		o.shutdown = nil
		return f(ctx)
	}
	return nil
}

// tracingRequested reads the OTEL_* variables that turn tracing on or off.
func tracingRequested() (bool, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	switch exp := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); exp {
	case "":
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	default:
		return false, fmt.Errorf("zealgo: OTEL_TRACES_EXPORTER=%s: this build exports traces with otlp only (or none)", exp)
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
}

// tracerFromEnv makes a TracerProvider exporting with OTLP over HTTP when
// the environment asks for tracing, else returns nil.
func tracerFromEnv(ctx context.Context) (*sdktrace.TracerProvider, error) {
	on, err := tracingRequested()
	if !on || err != nil {
		return nil, err
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return nil, fmt.Errorf("zealgo: OTEL_EXPORTER_OTLP_PROTOCOL=%s: this build exports traces over http/protobuf only", proto)
	}
	exp, err := otlptracehttp.New(ctx) // reads OTEL_EXPORTER_OTLP_*
	if err != nil {
		return nil, fmt.Errorf("zealgo: tracing: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "zealgo")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("zealgo: tracing: resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// traceLayer gives each request a server span, when tracing is on.
func (o *opsState) traceLayer(h http.Handler) http.Handler {
	if o.tracer == nil {
		return h
	}
	return otelhttp.NewHandler(h, "zealgo", otelhttp.WithTracerProvider(o.tp), otelhttp.WithPropagators(o.prop),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }))
}

// nameSpan names the request's span after the file that answered it and
// adds the request id.
func nameSpan(r *http.Request, id, file string) {
	span := trace.SpanFromContext(r.Context())
	if !span.IsRecording() {
		return
	}
	if file != "" {
		span.SetName(r.Method + " " + file)
		span.SetAttributes(attribute.String("zealgo.file", file))
	}
	span.SetAttributes(attribute.String("zealgo.request_id", id))
}

// traceLogHandler adds trace_id and span_id to records logged with a
// context that holds a span.
type traceLogHandler struct{ slog.Handler }

func (h traceLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceLogHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceLogHandler) WithGroup(name string) slog.Handler {
	return traceLogHandler{h.Handler.WithGroup(name)}
}

// setupWorker is setupTracing in a task worker: the tracer comes from
// the environment (the worker has the server's), and without one the
// task's context still carries the dispatcher's trace, so that the
// worker's log records about the task name it. The worker's log, which
// the server forwards to its own, becomes slog's default, so that slog in
// a task file writes through it.
func (o *opsState) setupWorker(log *slog.Logger) (*slog.Logger, error) {
	sdk, err := tracerFromEnv(context.Background())
	if err != nil {
		return log, err
	}
	var tp trace.TracerProvider = noop.NewTracerProvider()
	if sdk != nil {
		tp, o.shutdown = sdk, sdk.Shutdown
	}
	o.tp, o.tracer, o.prop = tp, tp.Tracer(tracerName), propagator
	log = slog.New(traceLogHandler{log.Handler()})
	o.log = log
	slog.SetDefault(log)
	return log, nil
}

// endSpan ends span, marking it failed when err is set.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
