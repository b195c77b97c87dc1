package host_test

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestTracingIntoTasks: with an SDK TracerProvider given to the
// application, a request that carries a W3C traceparent gets a server
// span in the caller's trace, named after the handler file; the task it
// dispatches with TaskContext gets a producer span in the same trace, and
// the worker's log records about the task (its own slog.InfoContext too)
// carry that trace id and the producer span as parent. The access log
// carries the trace id as well. A request without tracing headers starts
// a trace of its own.
func TestTracingIntoTasks(t *testing.T) { testTracingIntoTasks(t) }

// TestTracingIntoTasksOnNATS: the same with the tasks on the embedded
// NATS JetStream, which carries the trace context in its task messages.
func TestTracingIntoTasksOnNATS(t *testing.T) { testTracingIntoTasks(t, natsOpts(host.NATSEmbedded)) }

func testTracingIntoTasks(t *testing.T, opts ...host.Option) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	ta := newTaskApp(t, map[string]string{
		"api/jobs/start.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n" +
			"var start = func(api *host.API) (any, error) {\n" +
			"\tid, err := api.App().Server().TaskContext(api.Context(), host.Task{Handler: \"/task/note\", Args: []any{\"hello\"}})\n" +
			"\treturn map[string]any{\"id\": id}, err\n}\n",
		"task/note.go": taskFile("note", "\"context\"\n\"log/slog\"",
			`func(ctx context.Context, s string) any { slog.InfoContext(ctx, "noted in the task", "s", s); return s }`),
	}, 1, true, append([]host.Option{host.WithTracerProvider(tp), host.WithAccessLog(true)}, opts...)...)

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest("GET", ta.srv.URL+"/api/jobs/start", nil)
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out struct{ ID int64 }
	if err := json.Unmarshal(body, &out); err != nil || resp.StatusCode != 200 || out.ID == 0 {
		t.Fatalf("GET /api/jobs/start: %d %s", resp.StatusCode, body)
	}
	if f := ta.sink.wait(t, out.ID); f.err != nil || f.result != "hello" {
		t.Fatalf("task: %v %v", f.result, f.err)
	}

	server := findSpan(t, exp, "GET api/jobs/start.go")
	if server.SpanKind != trace.SpanKindServer || server.SpanContext.TraceID().String() != traceID ||
		server.Parent.SpanID().String() != parentID {
		t.Errorf("server span: kind %v trace %s parent %s, want the caller's trace and span", server.SpanKind,
			server.SpanContext.TraceID(), server.Parent.SpanID())
	}
	if !hasAttr(server, "zealgo.file", "api/jobs/start.go") || !hasAttr(server, "zealgo.request_id", resp.Header.Get("X-Request-Id")) {
		t.Errorf("server span attributes: %v", server.Attributes)
	}
	dispatch := findSpan(t, exp, "dispatch task/note.go")
	if dispatch.SpanKind != trace.SpanKindProducer || dispatch.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Errorf("dispatch span: kind %v parent %s, want a producer child of the server span %s", dispatch.SpanKind,
			dispatch.Parent.SpanID(), server.SpanContext.SpanID())
	}

	// The worker's records reach the server's log once the task is done.
	wantIDs := "trace_id=" + traceID + " span_id=" + dispatch.SpanContext.SpanID().String()
	testutil.WaitFor(t, 10*time.Second, "the worker's task records", func() bool {
		return logLineWith(ta.logs.String(), `msg="task run"`, wantIDs) != "" &&
			logLineWith(ta.logs.String(), `msg="noted in the task"`, wantIDs) != ""
	})
	if line := logLineWith(ta.logs.String(), `msg="task run"`, wantIDs); !strings.Contains(line, "task=/task/note") ||
		!strings.Contains(line, "outcome=ok") || !strings.Contains(line, "worker=0") {
		t.Errorf("task run record: %s", line)
	}
	if logLineWith(ta.logs.String(), "msg=request", "path=/api/jobs/start", "trace_id="+traceID) == "" {
		t.Errorf("no access record with the trace id:\n%s", ta.logs)
	}

	// Without a traceparent: a new trace, still named after the file.
	exp.Reset()
	fetchOps(t, "GET", ta.srv.URL+"/api/jobs/start")
	fresh := findSpan(t, exp, "GET api/jobs/start.go")
	if fresh.Parent.IsValid() || fresh.SpanContext.TraceID().String() == traceID {
		t.Errorf("a request without traceparent joined a trace: parent %v", fresh.Parent)
	}
}

// findSpan returns the ended span named name, failing the test without
// one.
func findSpan(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStub {
	t.Helper()
	var names []string
	for _, s := range exp.GetSpans() {
		if s.Name == name {
			return s
		}
		names = append(names, s.Name)
	}
	t.Fatalf("no span %q among %q", name, names)
	return tracetest.SpanStub{}
}

func hasAttr(s tracetest.SpanStub, key, value string) bool {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key && kv.Value.AsString() == value {
			return true
		}
	}
	return false
}

// logLineWith returns the first line of logs holding every part.
func logLineWith(logs string, parts ...string) string {
	for _, line := range strings.Split(logs, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return line
		}
	}
	return ""
}

// collector is a fake OTLP/HTTP receiver of traces.
type collector struct {
	mu    sync.Mutex
	spans map[string]collected // by name
}

type collected struct {
	service, traceID, spanID, parentID string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans[s.GetName()] = collected{service, hex.EncodeToString(s.GetTraceId()),
					hex.EncodeToString(s.GetSpanId()), hex.EncodeToString(s.GetParentSpanId())}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func (c *collector) get(name string) (collected, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.spans[name]
	return s, ok
}

// TestTracingFromEnvironment: OTEL_EXPORTER_OTLP_ENDPOINT alone turns
// tracing on, in the server and in its task workers, which inherit the
// environment: a collector receives the request's span, the dispatch
// span and the worker's span of the task, one trace, each the child of
// the one before, under the service OTEL_SERVICE_NAME names.
// OTEL_TRACES_EXPORTER=none keeps it off, and an exporter this build
// lacks stops the start-up.
func TestTracingFromEnvironment(t *testing.T) {
	col := &collector{spans: map[string]collected{}}
	srv := httptest.NewServer(col)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "ops-test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	files := map[string]string{
		"api/jobs/start.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n" +
			"var start = func(api *host.API) (any, error) {\n" +
			"\tid, err := api.App().Server().TaskContext(api.Context(), host.Task{Handler: \"/task/pid\"})\n" +
			"\treturn map[string]any{\"id\": id}, err\n}\n",
		"task/pid.go": taskPid,
	}
	ta := newTaskApp(t, files, 1, true)
	if code, body := fetchOps(t, "GET", ta.srv.URL+"/api/jobs/start"); code != 200 {
		t.Fatalf("GET /api/jobs/start: %d %s", code, body)
	}
	var server, dispatch, run collected
	testutil.WaitFor(t, 15*time.Second, "the three spans at the collector", func() bool {
		var ok1, ok2, ok3 bool
		server, ok1 = col.get("GET api/jobs/start.go")
		dispatch, ok2 = col.get("dispatch task/pid.go")
		run, ok3 = col.get("run task/pid.go")
		return ok1 && ok2 && ok3
	})
	if server.service != "ops-test" || run.service != "ops-test" {
		t.Errorf("services %q and %q, want ops-test", server.service, run.service)
	}
	if dispatch.traceID != server.traceID || run.traceID != server.traceID ||
		dispatch.parentID != server.spanID || run.parentID != dispatch.spanID {
		t.Errorf("not one trace, each span the child of the one before: server %+v, dispatch %+v, run %+v", server, dispatch, run)
	}

	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	col.spans = map[string]collected{}
	off := newTestApp(t, files)
	fetchOps(t, "GET", off.srv.URL+"/api/jobs/start")
	off.srv.Close()
	off.app.Close() // flushes the span batch to the collector, if any were exported
	if _, ok := col.get("GET api/jobs/start.go"); ok {
		t.Error("OTEL_TRACES_EXPORTER=none: a span was exported")
	}

	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, 0))
	if _, err := app.Handler(); err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_EXPORTER=zipkin") {
		t.Errorf("an unknown exporter: %v", err)
	}
}
