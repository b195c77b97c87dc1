package host

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/zealgo/zealgo/internal/deadline"
	"github.com/zealgo/zealgo/internal/logbuf"
	"go.opentelemetry.io/otel/trace"
)

// Operations: what an operator of the application looks at, none of it
// seen by handler files.
//
//   - Health (health.go): Config.Ops.HealthPath (/healthz) answers 200
//     while the process runs; Config.Ops.ReadyPath (/readyz) answers 200
//     when the application has started, its database answers a ping and
//     its task backend is up, and 503 otherwise and while the server
//     drains at shutdown. Both are answered before anything else: no
//     middleware, access log, metrics or trace sees them.
//   - Metrics (metrics.go): Prometheus, on a listener of their own
//     (Config.Ops.MetricsAddr, off by default), with net/http/pprof beside
//     them when Config.Ops.Pprof is set.
//   - Tracing (tracing.go): OpenTelemetry, on when the standard OTEL_*
//     variables name an exporter or Config.Ops.TracerProvider is set.
//   - The access log (accesslog.go): one record per request.
//
// The request path gains one layer for them (opsRoot), outside the
// outermost layer of dispatch.go, and one deferred call in it (observe).

// OpsConfig configures health checks, metrics, tracing and the access log.
type OpsConfig struct {
	// HealthPath is the liveness check: 200 while the process serves.
	// Default "/healthz"; empty: not answered (the path is routed as
	// any other).
	HealthPath string
	// ReadyPath is the readiness check: 200 when the application has
	// started, its database answers and its task backend is up; 503 when
	// one of them is not, and from the start of a graceful shutdown on.
	// Default "/readyz"; empty: not answered.
	ReadyPath string
	// DrainDelay is how long, at a graceful shutdown, the server goes on
	// serving with the readiness check failing before it stops accepting
	// connections, so that a load balancer stops sending requests first.
	// Default 0.
	DrainDelay time.Duration
	// MetricsAddr is the address of the metrics listener, which serves
	// Prometheus metrics at /metrics. Default "": no listener, and no
	// metrics are kept.
	MetricsAddr string
	// Pprof serves net/http/pprof under /debug/pprof/ on the metrics
	// listener; it needs MetricsAddr.
	Pprof bool
	// AccessLog logs one record per request, at level info, through
	// AccessLogger: method, path (without the query), status, bytes,
	// duration, request_id, file (the handler or page file that ran, if
	// any) and remote.
	AccessLog bool
	// AccessLogger receives the access log. Default: the application's
	// logger; the serve command's own log gives it one that writes the
	// same format through a buffer, to spare a system call per request.
	AccessLogger *slog.Logger
	// LogFormat is the format of the log the serve command makes when
	// Config.Logger is not set: "text" (the default) or "json".
	LogFormat string
	// LogLevel is the level of that log: "debug", "info" (the default;
	// "debug" with Config.Dev), "warn" or "error".
	LogLevel string
	// TracerProvider traces requests and tasks with OpenTelemetry. Default:
	// one made from the standard OTEL_* environment variables when they
	// name an exporter (OTEL_TRACES_EXPORTER=otlp, or an
	// OTEL_EXPORTER_OTLP_ENDPOINT), else no tracing. A provider given here
	// is not shut down by the application.
	TracerProvider trace.TracerProvider
}

func defaultOpsConfig() OpsConfig {
	return OpsConfig{HealthPath: "/healthz", ReadyPath: "/readyz"}
}

// WithMetrics sets Config.Ops.MetricsAddr: serve Prometheus metrics at
// http://addr/metrics.
func WithMetrics(addr string) Option { return func(c *Config) { c.Ops.MetricsAddr = addr } }

// WithAccessLog sets Config.Ops.AccessLog.
func WithAccessLog(on bool) Option { return func(c *Config) { c.Ops.AccessLog = on } }

// WithTracerProvider sets Config.Ops.TracerProvider: requests and tasks
// are traced with tp (an SDK TracerProvider, for example one that exports
// to a test's in-memory exporter).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *Config) { c.Ops.TracerProvider = tp }
}

// opsState is the application's side of operations.
type opsState struct {
	draining   atomic.Bool  // the server is shutting down: not ready
	handedOver atomic.Bool  // a supervised child asked for its successor
	observing  bool         // observe runs for every request
	accessLog  bool         // Config.Ops.AccessLog
	log        *slog.Logger // the application's, as tracing made it
	setDefault bool         // make the log slog's default at start-up
	access     *slog.Logger // of the access log
	// direct writes the access log without slog when its logger is the
	// serve command's (logbuf.DirectOf); nil otherwise.
	direct   *logbuf.Direct
	metrics  *metrics // nil without Config.Ops.MetricsAddr
	registry registryOnce
	metricsSrv
	tracing
	health healthState
}

// setup makes the metrics and the tracer, once the directories are
// resolved and before anything compiles or serves, and returns the
// application's logger as tracing wraps it. gauges read what other
// components hold.
func (o *opsState) setup(cfg *Config, log *slog.Logger, gauges opsGauges) (*slog.Logger, error) {
	oc := &cfg.Ops
	if oc.Pprof && oc.MetricsAddr == "" {
		return nil, errors.New("zealgo: pprof is served on the metrics listener: set the metrics address (--metrics-addr) too")
	}
	if oc.MetricsAddr != "" {
		o.metrics = newMetrics(o.registry.get())
		o.registerGauges(gauges)
	}
	o.access = oc.AccessLogger
	if o.access == nil {
		o.access = log
	}
	o.direct = logbuf.DirectOf(o.access.Handler())
	log, err := o.setupTracing(oc, log)
	if err != nil {
		return nil, err
	}
	o.log, o.accessLog = log, oc.AccessLog
	o.observing = o.metrics != nil || oc.AccessLog || o.tracer != nil
	if o.setDefault {
		slog.SetDefault(log)
	}
	return log, nil
}

// logAsDefault makes the application's log slog's default, and so the
// log package's output, once the application starts (the serve command
// asks for it): slog in a handler file then writes through the same
// handler and format. The returned func puts the previous ones back.
func (o *opsState) logAsDefault() func() {
	prev, w, flags := slog.Default(), log.Writer(), log.Flags()
	o.setDefault = true
	return func() {
		slog.SetDefault(prev)
		log.SetOutput(w)
		log.SetFlags(flags)
	}
}

// root wraps the application's handler: health checks first (the
// readiness check asks probes), then the tracing of the request.
func (o *opsState) root(h http.Handler, cfg *OpsConfig, probes []readyProbe) http.Handler {
	return o.healthLayer(o.traceLayer(h), cfg, probes)
}

// observe records a finished request: metrics, the access log and the
// name of its span. The outermost layer defers it when ops.observing is
// set.
func (o *opsState) observe(f servedFile, id string, start time.Duration, r *http.Request, res *echo.Response) {
	var end time.Time // read only for the access log
	var d time.Duration
	if o.accessLog {
		end = time.Now()
		d = end.Sub(clockBase) - start
	} else {
		d = time.Since(clockBase) - start
	}
	status := res.Status
	if status == 0 {
		status = http.StatusOK // nothing written: net/http sends 200
	}
	if m := o.metrics; m != nil {
		if f.live != 0 { // a WebSocket's or a stream's lifetime is no request duration
			m.liveDuration.WithLabelValues(kindNames[f.live-1]).Observe(d.Seconds())
			m.requestOnly(f, r.Method, status)
		} else {
			m.request(f, r.Method, status, d) // ops_series.go
		}
	}
	if o.accessLog {
		o.accessLogRecord(r, id, f.rel, status, res.Size, end, d)
	}
	if o.tracer != nil {
		nameSpan(r, id, f.rel)
	}
}

// clockBase is the origin of the requests' start times: a reading of
// the monotonic clock alone (time.Since) costs less than time.Now, which
// reads the wall clock too. It is the origin of the shared clock of
// internal/deadline (clockNow).
var clockBase = deadline.Base()

// clockNow returns the time since clockBase. While Serve runs, the shared
// clock of its connections (internal/deadline) gives it with an atomic
// load, rounded up by a tick so that no limit counted from it passes
// early, if coarse: when every time limit counted from it is a second or
// more and no request's duration is observed (ops.go: the access log and
// metrics want it exact). Else the monotonic clock gives it.
func clockNow(coarse bool) time.Duration {
	if coarse {
		if d, ok := deadline.Now(); ok {
			return d + deadline.DefaultTick
		}
	}
	return time.Since(clockBase)
}

// clockStale returns how much earlier than the moment it stands for a
// time clockNow gave may be: under load a watcher's tick can come late,
// and the shared clock's reading under the time then stood longer than
// the tick it was rounded up by (deadline.Stale). 0 for the monotonic
// clock's times.
func clockStale(t time.Duration) time.Duration {
	return deadline.Stale(t - deadline.DefaultTick)
}

// startObserving counts a request in flight; observe counts it out.
func (o *opsState) startObserving() {
	if m := o.metrics; m != nil {
		m.inflight.Add(1)
	}
}

// drain is the first step of a graceful shutdown: the readiness check
// fails from now on, and the server goes on serving for d
// (Config.Ops.DrainDelay).
func (o *opsState) drain(d time.Duration, log *slog.Logger) {
	if o.handedOver.Load() { // the successor serves the socket already
		return
	}
	o.draining.Store(true)
	if d > 0 {
		log.Info("zealgo draining: not ready; serving on until the drain delay ends", "drain_delay", d)
		time.Sleep(d)
	}
}

// handOver prepares a supervised child that asks the supervisor for its
// successor (exectime.go). The successor listens on the metrics address,
// so this process's metrics listener closes now; and it serves the shared
// socket by the time this process is told to stop, so this one's shutdown
// neither waits out the drain delay nor fails the readiness check, which
// a probe may reach in either process.
func (o *opsState) handOver() {
	o.handedOver.Store(true)
	o.closeMetricsServer()
}

// close stops the metrics listener and flushes the traces.
func (o *opsState) close(log *slog.Logger) {
	o.closeMetricsServer()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := o.shutdownTracing(ctx); err != nil {
		log.Warn("zealgo: flushing traces", "err", err)
	}
}

// logLevel parses Config.Ops.LogLevel.
func (o *OpsConfig) logLevel(dev bool) (slog.Level, error) {
	if o.LogLevel == "" {
		if dev {
			return slog.LevelDebug, nil
		}
		return slog.LevelInfo, nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(o.LogLevel)); err != nil {
		return 0, errors.New("zealgo: log level " + o.LogLevel + ": want debug, info, warn or error")
	}
	return l, nil
}
