package host_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// scrape reads the metrics listener of app over HTTP and parses the text
// format.
func scrape(t *testing.T, app *host.App) map[string]*dto.MetricFamily {
	t.Helper()
	addr := app.Server().MetricsAddr()
	if addr == "" {
		t.Fatal("no metrics listener")
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the metrics: %v", err)
	}
	return fams
}

// metricValue returns the value of the metric name with exactly the given
// labels ("k=v" pairs): a counter's or gauge's value, a histogram's
// sample count; -1 when there is none.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f, ok := fams[name]
	if !ok {
		return -1
	}
	want := strings.Join(labels, ",")
	for _, m := range f.GetMetric() {
		var got []string
		for _, lp := range m.GetLabel() {
			got = append(got, lp.GetName()+"="+lp.GetValue())
		}
		if strings.Join(got, ",") != want {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}

const okHandler = "//go:build ignore\n\npackage main\n\nvar ok = func() any { return map[string]any{\"v\": %d} }\n"

// TestMetricsAfterRequests makes a known set of requests and compiles and
// reads the counts back from the metrics listener: requests by handler
// file, method and status, latency histograms, compiles and reloads with
// their failures, loaded files, the runtime's collectors. A second app in
// the same process keeps counts of its own. pprof answers only when
// asked for.
func TestMetricsAfterRequests(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"api/ok.go":     fmt.Sprintf(okHandler, 1),
		"api/fail.go":   "//go:build ignore\n\npackage main\n\nimport \"errors\"\n\nvar fail = func() (any, error) { return nil, errors.New(\"no\") }\n",
		"api/broken.go": "//go:build ignore\n\npackage main\n\nvar broken = func() any { return undefinedThing }\n",
		"public/a.txt":  "static",
	}, host.WithMetrics("127.0.0.1:0"), host.WithConfig(func(c *host.Config) { c.Ops.Pprof = true }))
	other := newTestApp(t, map[string]string{"api/ok.go": fmt.Sprintf(okHandler, 1)}, host.WithMetrics("127.0.0.1:0"))
	// broken.go was saved long ago: its error counts at its first compile,
	// with no second look for a save in progress (interp's firstBuild).
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(ta.root, "api/broken.go"), long, long); err != nil {
		t.Fatal(err)
	}

	for _, r := range []struct {
		method, path string
		n, status    int
	}{
		{"GET", "/api/ok", 3, 200}, {"POST", "/api/ok", 1, 200}, {"GET", "/api/fail", 2, 500},
		{"GET", "/api/broken", 1, 500}, {"GET", "/a.txt", 1, 200}, {"GET", "/api/missing", 1, 404},
		{"BREW", "/api/ok", 1, 405},
	} {
		for i := 0; i < r.n; i++ {
			if code, _ := fetchOps(t, r.method, ta.srv.URL+r.path); code != r.status {
				t.Fatalf("%s %s: %d, want %d", r.method, r.path, code, r.status)
			}
		}
	}
	fetchOps(t, "GET", other.srv.URL+"/api/ok")
	if err := os.WriteFile(filepath.Join(ta.root, "api/ok.go"), []byte(fmt.Sprintf(okHandler, 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the reload", func() bool {
		_, body := fetchOps(t, "GET", ta.srv.URL+"/api/ok")
		return body == `{"v":2}`
	})

	fams := scrape(t, ta.app)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"zealgo_http_requests_total", []string{"code=200", "handler=api/ok.go", "method=POST"}, 1},
		{"zealgo_http_requests_total", []string{"code=500", "handler=api/fail.go", "method=GET"}, 2},
		{"zealgo_http_requests_total", []string{"code=500", "handler=none", "method=GET"}, 1}, // broken: no file loaded
		{"zealgo_http_requests_total", []string{"code=200", "handler=none", "method=GET"}, 1}, // the static file
		{"zealgo_http_requests_total", []string{"code=404", "handler=none", "method=GET"}, 1},
		{"zealgo_http_requests_total", []string{"code=405", "handler=none", "method=OTHER"}, 1}, // Echo refuses the method before any file
		{"zealgo_http_request_duration_seconds", []string{"handler=api/fail.go", "method=GET"}, 2},
		{"zealgo_http_requests_in_flight", nil, 0},
		{"zealgo_compile_duration_seconds", []string{"dir=api", "trigger=load"}, 3},
		{"zealgo_compile_failures_total", []string{"dir=api", "trigger=load"}, 1},
		{"zealgo_compile_duration_seconds", []string{"dir=api", "trigger=reload"}, 1},
		{"zealgo_loaded_files", []string{"dir=api"}, 3},
		{"zealgo_loaded_files", []string{"dir=public"}, 0},
	} {
		if got := metricValue(fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// GET /api/ok: 3 before the reload, then one or more while waiting.
	if n := metricValue(fams, "zealgo_http_requests_total", "code=200", "handler=api/ok.go", "method=GET"); n < 4 {
		t.Errorf("GET api/ok.go 200 counted %v times, want at least 4", n)
	}
	h := fams["zealgo_http_request_duration_seconds"].GetMetric()[0].GetHistogram()
	if len(h.GetBucket()) < 10 || h.GetSampleSum() <= 0 {
		t.Errorf("latency histogram: %d buckets, sum %v", len(h.GetBucket()), h.GetSampleSum())
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("no %s among the metrics", name)
		}
	}

	otherFams := scrape(t, other.app)
	if n := metricValue(otherFams, "zealgo_http_requests_total", "code=200", "handler=api/ok.go", "method=GET"); n != 1 {
		t.Errorf("the second app counts %v requests, want its own 1", n)
	}

	if code, body := fetchOps(t, "GET", "http://"+ta.app.Server().MetricsAddr()+"/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("pprof on: %d %.200q", code, body)
	}
	if code, _ := fetchOps(t, "GET", "http://"+other.app.Server().MetricsAddr()+"/debug/pprof/"); code != 404 {
		t.Errorf("pprof off: %d, want 404", code)
	}
	if code, _ := fetchOps(t, "GET", ta.srv.URL+"/metrics"); code != 404 {
		t.Errorf("/metrics on the application's own address: %d, want 404", code)
	}
}

// TestTaskMetrics: tasks dispatched and finished, with their outcome and
// duration, and the queue, as the server counts them.
func TestTaskMetrics(t *testing.T) {
	ta := newTaskApp(t, map[string]string{
		"task/pid.go":  taskPid,
		"task/fail.go": taskFile("fail", `"errors"`, `func() error { return errors.New("no") }`),
	}, 1, true, host.WithMetrics("127.0.0.1:0"))
	for i := 0; i < 3; i++ {
		ta.pidOf(t)
	}
	if f := ta.run(t, "/task/fail"); f.err == nil {
		t.Fatal("task/fail did not fail")
	}
	// The finish callback runs after the metrics count the finish.
	fams := scrape(t, ta.app)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"zealgo_tasks_dispatched_total", []string{"task=/task/pid"}, 3},
		{"zealgo_tasks_finished_total", []string{"outcome=ok", "task=/task/pid"}, 3},
		{"zealgo_tasks_finished_total", []string{"outcome=error", "task=/task/fail"}, 1},
		{"zealgo_task_duration_seconds", []string{"task=/task/pid"}, 3},
		{"zealgo_tasks_in_progress", nil, 0},
		{"zealgo_task_queue_depth", nil, 0},
	} {
		if got := metricValue(fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// failingSessions is a session backend whose saves fail.
type failingSessions struct{}

func (failingSessions) Load(context.Context, string) ([]byte, error) {
	return nil, host.ErrSessionNotFound
}
func (failingSessions) Save(context.Context, string, []byte, time.Duration) error {
	return errors.New("disk full")
}
func (failingSessions) Delete(context.Context, string) error { return nil }

// TestSessionStoreErrorMetric: each failed save of the session store is
// counted.
func TestSessionStoreErrorMetric(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"api/login.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n" +
			"var login = func(api *host.API) any { api.G().Session.Set(\"user\", 1); return map[string]any{\"ok\": true} }\n",
	}, host.WithMetrics("127.0.0.1:0"), host.WithSessionBackend(failingSessions{}), host.WithSessionSecret(strings.Repeat("s", 32)))
	for i := 0; i < 2; i++ {
		fetchOps(t, "POST", ta.srv.URL+"/api/login")
	}
	fams := scrape(t, ta.app)
	if n := metricValue(fams, "zealgo_session_store_errors_total", "op=save"); n != 2 {
		t.Errorf("session save errors counted %v, want 2", n)
	}
	if n := metricValue(fams, "zealgo_session_store_errors_total", "op=load"); n != -1 {
		t.Errorf("session load errors counted %v, want none", n)
	}
}
