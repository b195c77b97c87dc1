package host

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/zealgo/zealgo/internal/logbuf"
)

// BenchmarkObserve measures what operations add to one request, alone:
// startObserving and observe of a request that api/php/get.go answered,
// with metrics, the access log (JSON to a file through the serve
// command's buffered log), or both.
//
//	go test ./host -run '^$' -bench BenchmarkObserve -benchmem -count 5
func BenchmarkObserve(b *testing.B) {
	for _, tc := range []struct {
		name         string
		metrics, log bool
		format       string
	}{{"metrics", true, false, "json"}, {"accesslog", false, true, "json"}, {"on", true, true, "json"},
		{"on-text", true, true, "text"}} {
		b.Run(tc.name, func(b *testing.B) {
			a := observeBenchApp(b, tc.metrics, tc.log, tc.format)
			r := httptest.NewRequest(http.MethodGet, "/api/php/get?a=1&b=two", nil)
			res := echo.NewResponse(httptest.NewRecorder(), nil)
			res.Status, res.Size = http.StatusOK, 27
			st := &reqState{id: "1a2b3c4d5e6f7a8b", file: &handlerFile{rel: "api/php/get.go"}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st.start = time.Since(clockBase)
				rtOf(a).ops.startObserving()
				rtOf(a).ops.observe(st.served(), st.id, st.start, r, res)
			}
		})
	}
}

func observeBenchApp(b *testing.B, metrics, accessLog bool, format string) *App {
	b.Helper()
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "api"), 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(b.TempDir(), "access.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	logs, err := logbuf.New(f, format, slog.LevelInfo)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logs.Close() })
	opts := []Option{WithRoot(root), WithLogger(logs.Main), WithAccessLog(accessLog),
		WithConfig(func(c *Config) { c.Ops.AccessLogger = logs.Bulk })}
	if metrics {
		opts = append(opts, WithMetrics("127.0.0.1:0"))
	}
	a := New(opts...)
	if _, err := a.Handler(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return a
}
