package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/zealgo/zealgo/internal/sessionstore"
	"github.com/zealgo/zealgo/interp"
)

// Metrics. Every App has a registry of its own (so that tests, or one
// process, can run several), served on Config.Ops.MetricsAddr at
// /metrics. Names and labels:
//
//	zealgo_http_requests_total{handler,method,code}       counter
//	zealgo_http_request_duration_seconds{handler,method}  histogram
//	zealgo_http_requests_in_flight                        gauge
//	zealgo_live_connection_duration_seconds{kind}         histogram: WebSockets and streams, open to closed (kind websocket or sse); not in the request duration
//	zealgo_compile_duration_seconds{dir,trigger}          histogram: dir api, public or task; trigger load or reload
//	zealgo_compile_failures_total{dir,trigger}            counter
//	zealgo_loaded_files{dir}                              gauge: compiled files held (one interpreter each)
//	zealgo_tasks_dispatched_total{task}                   counter
//	zealgo_tasks_finished_total{task,outcome}             counter: outcome ok, or the failure (error, panic, args, load, result, worker_exited, shutdown, other)
//	zealgo_task_duration_seconds{task}                    histogram: dispatch to finish, as this process sees it
//	zealgo_tasks_in_progress                              gauge: dispatched here, not yet finished
//	zealgo_task_queue_depth                               gauge: tasks waiting for a worker (backends that can tell)
//	zealgo_session_store_errors_total{op}                 counter: op load, save or delete
//
// plus the Go runtime's and the process's collectors (go_*, process_*).
// handler is the file that answered, relative to the root
// ("api/php/get.go", "public/index.go"), or "none" when no handler or page
// file ran (static files, redirects, 404s); method is the request's, or
// "OTHER" for a method outside the standard ones. Neither grows with what
// clients send. (echo-contrib's echoprometheus labels requests with the
// Echo route, which is "/api/*" for every handler file, so the outermost
// layer counts them itself.)

// registryOnce makes the registry on first use.
type registryOnce struct {
	once sync.Once
	reg  *prometheus.Registry
}

func (r *registryOnce) get() *prometheus.Registry {
	r.once.Do(func() { r.reg = prometheus.NewRegistry() })
	return r.reg
}

// metrics are the framework's collectors.
type metrics struct {
	requests        *prometheus.CounterVec
	duration        *prometheus.HistogramVec
	liveDuration    *prometheus.HistogramVec
	inflight        atomic.Int64 // zealgo_http_requests_in_flight
	none            *fileSeries  // of requests no file answered
	compiles        *prometheus.HistogramVec
	compileFailures *prometheus.CounterVec
	tasksDispatched *prometheus.CounterVec
	tasksFinished   *prometheus.CounterVec
	taskDuration    *prometheus.HistogramVec
	tasksInProgress prometheus.Gauge
	sessionErrors   *prometheus.CounterVec

	taskStarts sync.Map // task id -> time.Time of its dispatch
}

// latencyBuckets suit requests that take from a tenth of a millisecond
// to seconds.
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// liveBuckets suit connections open from a second to a day.
var liveBuckets = []float64{1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}

// compileBuckets suit compiles, from half a millisecond to seconds.
var compileBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10}

func newMetrics(reg *prometheus.Registry) *metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels))
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels))
	}
	gauge := func(name, help string) prometheus.Gauge {
		return register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help}))
	}
	m := &metrics{
		requests: counter("zealgo_http_requests_total",
			"HTTP requests answered, by handler file, method and status code.", "handler", "method", "code"),
		duration: histogram("zealgo_http_request_duration_seconds",
			"Time from a request's arrival to the end of its response, by handler file and method.",
			latencyBuckets, "handler", "method"),
		liveDuration: histogram("zealgo_live_connection_duration_seconds",
			"Lifetimes of WebSockets and Server-Sent Events streams, by kind; their requests are left out of zealgo_http_request_duration_seconds.",
			liveBuckets, "kind"),
		compiles: histogram("zealgo_compile_duration_seconds",
			"Compiles of handler and page files: on first use (load) and after a change on disk (reload), failed ones included.",
			compileBuckets, "dir", "trigger"),
		compileFailures: counter("zealgo_compile_failures_total", "Compiles that failed, by directory and trigger.", "dir", "trigger"),
		tasksDispatched: counter("zealgo_tasks_dispatched_total", "Tasks dispatched by this process, by task.", "task"),
		tasksFinished: counter("zealgo_tasks_finished_total",
			"Tasks finished, by task and outcome: ok or the kind of failure.", "task", "outcome"),
		taskDuration: histogram("zealgo_task_duration_seconds",
			"Time from a task's dispatch to its finish, by task.", latencyBuckets, "task"),
		tasksInProgress: gauge("zealgo_tasks_in_progress", "Tasks dispatched by this process and not finished: queued or running."),
		sessionErrors:   counter("zealgo_session_store_errors_total", "Errors of the session store, by operation.", "op"),
	}
	m.none = &fileSeries{file: "none"}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "zealgo_http_requests_in_flight",
		Help: "Requests being answered."}, func() float64 { return float64(m.inflight.Load()) }))
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// register registers c with reg and returns it.
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	reg.MustRegister(c)
	return c
}

// opsGauges read, for the gauges, what other components hold: the
// handler and page files loaded, the tasks queued.
type opsGauges struct {
	apiFiles, pageFiles, queued func() int
}

// registerGauges adds the gauges read from the running application: the
// loaded files and the task queue.
func (o *opsState) registerGauges(g opsGauges) {
	reg := o.registry.get()
	for _, c := range []struct {
		dir string
		n   func() int
	}{{"api", g.apiFiles}, {"public", g.pageFiles}} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "zealgo_loaded_files",
			Help:        "Compiled handler and page files held in memory, each an interpreter of its own.",
			ConstLabels: prometheus.Labels{"dir": c.dir}}, func() float64 { return float64(c.n()) }))
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "zealgo_task_queue_depth",
		Help: "Tasks waiting for a worker (0 when the task backend cannot tell)."}, func() float64 {
		return float64(g.queued())
	}))
}

// methodLabel returns the method label of a request's method: the
// standard methods as they are, any other "OTHER".
func methodLabel(method string) string {
	switch method {
	case "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE":
		return method
	}
	return "OTHER"
}

// statusLabels holds the code label of each status, made once.
var statusLabels = func() (s [600]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

// compileObserver counts the compiles of the application's caches
// (interp.Observer).
type compileObserver struct {
	m           *metrics
	api, public string // the directories
}

// compileObserver returns the observer of the caches, or nil without
// metrics.
func (o *opsState) compileObserver(api, public string) interp.Observer {
	if o.metrics == nil {
		return nil
	}
	return compileObserver{m: o.metrics, api: api, public: public}
}

func (o compileObserver) Built(path string, reload bool, d time.Duration, err error) {
	dir, trigger := "task", "load"
	switch {
	case within(o.api, path):
		dir = "api"
	case within(o.public, path):
		dir = "public"
	}
	if reload {
		trigger = "reload"
	}
	m := o.m
	m.compiles.WithLabelValues(dir, trigger).Observe(d.Seconds())
	if err != nil {
		m.compileFailures.WithLabelValues(dir, trigger).Inc()
	}
}

// metricsSrv is the metrics listener.
type metricsSrv struct {
	srv *http.Server
	ln  net.Listener
	// inherited is the listener a supervised child is given, which the
	// supervisor holds across children; nil elsewhere.
	inherited net.Listener
}

// listenMetrics starts the metrics listener, if there is an address.
func (o *opsState) listenMetrics(cfg *OpsConfig) error {
	addr := cfg.MetricsAddr
	if addr == "" {
		return nil
	}
	ln := o.metricsSrv.inherited // a supervised child serves its supervisor's (supervise.go)
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("zealgo: metrics listener: %w", err)
		}
	}
	reg := o.registry.get()
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: promLog{o.log}}))
	if cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		s := "zealgo metrics: /metrics\n"
		if cfg.Pprof {
			s += "profiles: /debug/pprof/\n"
		}
		_, _ = w.Write([]byte(s))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	o.metricsSrv = metricsSrv{srv: srv, ln: ln}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.log.Error("zealgo: metrics listener", "err", err)
		}
	}()
	o.log.Info("zealgo metrics", "addr", "http://"+ln.Addr().String()+"/metrics", "pprof", cfg.Pprof)
	return nil
}

// closeMetricsServer stops the metrics listener.
func (o *opsState) closeMetricsServer() {
	if s := o.metricsSrv.srv; s != nil {
		_ = s.Close()
	}
}

// metricsAddr returns the address the metrics listener listens on, or
// "" (Server.MetricsAddr).
func (o *opsState) metricsAddr() string {
	if ln := o.metricsSrv.ln; ln != nil {
		return ln.Addr().String()
	}
	return ""
}

// promLog sends promhttp's errors to the application's log.
type promLog struct{ log *slog.Logger }

func (l promLog) Println(v ...any) {
	l.log.Error("zealgo: metrics: " + strings.TrimSpace(fmt.Sprintln(v...)))
}

// countSessionErrors wraps the session backend so that its errors are
// counted, when there are metrics.
func (o *opsState) countSessionErrors(b sessionstore.Backend) sessionstore.Backend {
	if o.metrics == nil {
		return b
	}
	return &countingBackend{b: b, errs: o.metrics.sessionErrors}
}

// countingBackend counts the errors of a session backend; an unknown id
// is no error.
type countingBackend struct {
	b    sessionstore.Backend
	errs *prometheus.CounterVec
}

func (c *countingBackend) count(op string, err error) error {
	if err != nil && !errors.Is(err, sessionstore.ErrNotFound) {
		c.errs.WithLabelValues(op).Inc()
	}
	return err
}

func (c *countingBackend) Load(ctx context.Context, id string) ([]byte, error) {
	b, err := c.b.Load(ctx, id)
	return b, c.count("load", err)
}

func (c *countingBackend) Save(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	return c.count("save", c.b.Save(ctx, id, data, ttl))
}

func (c *countingBackend) Delete(ctx context.Context, id string) error {
	return c.count("delete", c.b.Delete(ctx, id))
}

// Close closes the backend when it is an io.Closer.
func (c *countingBackend) Close() error { return sessionstore.CloseBackend(c.b) }
