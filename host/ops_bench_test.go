package host_test

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/logbuf"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// BenchmarkOps serves scenario 1 (/api/php/get) with operations off and
// on: metrics kept (and a listener to scrape them) and the access log
// written as JSON to a file, one record per request, through the log the
// serve command makes (internal/logbuf). Run the two
// interleaved, e.g. -count 6, and compare ns/op:
//
//	go test ./host -run '^$' -bench BenchmarkOps -benchmem -count 6
func BenchmarkOps(b *testing.B) {
	for _, tc := range []struct {
		name    string
		metrics bool
		log     bool
	}{{"off", false, false}, {"on", true, true}, {"metrics", true, false}, {"accesslog", false, true}} {
		b.Run(tc.name, func(b *testing.B) { benchServe(b, opsBenchApp(b, tc.metrics, tc.log), "/api/php/get?a=1&b=two") })
	}
}

// opsBenchApp starts an application over the scenario 1 handler with
// operations off or on.
func opsBenchApp(b *testing.B, metrics, accessLog bool) http.Handler {
	b.Helper()
	root := testutil.WriteTree(b, map[string]string{"api/php/get.go": benchGetFile})
	log, err := os.Create(filepath.Join(b.TempDir(), "access.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	logs, err := logbuf.New(log, "json", slog.LevelInfo) // as serve --log-format json makes them
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logs.Close() })
	opts := []host.Option{host.WithRoot(root), host.WithLogger(logs.Main),
		host.WithConfig(func(c *host.Config) { c.Ops.AccessLogger = logs.Bulk })}
	if metrics {
		opts = append(opts, host.WithMetrics("127.0.0.1:0"))
	}
	opts = append(opts, host.WithAccessLog(accessLog))
	app := host.New(opts...)
	app.Symbols(symbols.Symbols)
	h, err := app.Handler()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { app.Close() })
	return h
}
