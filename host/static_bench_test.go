package host_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// BenchmarkStatic compares a 4 KiB static file served by zealgo (the whole
// stack: request id, panic recovery, path checks, public/ lookup,
// http.ServeContent through an os.Root) with the same file served by
// echo.Static in a bare Echo app, in one run. Requests to the two
// alternate in batches (the order flipping every batch), so that both see
// the same machine load; the result is reported as echo-ns/req,
// zealgo-ns/req and their ratio (the median over rounds; 1.00 = no
// overhead). "loopback" goes
// through real HTTP on 127.0.0.1 with keep-alive; "inprocess" calls
// ServeHTTP directly, which leaves nothing but the two stacks to compare.
//
//	go test ./host -run '^$' -bench BenchmarkStatic -benchtime 20000x -count 3
func BenchmarkStatic(b *testing.B) {
	data := strings.Repeat("body{color:#123456}\n", 205)[:4096]
	root := testutil.WriteTree(b, map[string]string{"public/css/site.css": data})

	app := host.New(host.WithRoot(root), host.WithDataDir(b.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	zh, err := app.Handler()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { app.Close() })
	e := echo.New()
	e.Static("/", filepath.Join(root, "public"))

	handlers := []http.Handler{e, zh} // 0: echo, 1: zealgo
	const path = "/css/site.css"

	b.Run("loopback", func(b *testing.B) {
		var urls [2]string
		for i, h := range handlers {
			srv := httptest.NewServer(h)
			b.Cleanup(srv.Close)
			urls[i] = srv.URL + path
		}
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		b.Cleanup(client.CloseIdleConnections)
		do := func(i int) {
			resp, err := client.Get(urls[i])
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || n != int64(len(data)) {
				b.Fatalf("server %d: %d, %d bytes", i, resp.StatusCode, n)
			}
		}
		checkSame(b, handlers, path, data)
		compare(b, do)
	})

	b.Run("inprocess", func(b *testing.B) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		do := func(i int) {
			rec := httptest.NewRecorder()
			handlers[i].ServeHTTP(rec, req)
			if rec.Code != 200 || rec.Body.Len() != len(data) {
				b.Fatalf("handler %d: %d, %d bytes", i, rec.Code, rec.Body.Len())
			}
		}
		compare(b, do)
	})
}

// checkSame makes sure both handlers send the same body and Content-Type.
func checkSame(b *testing.B, handlers []http.Handler, path, data string) {
	b.Helper()
	var ctypes [2]string
	for i, h := range handlers {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), []byte(data)) {
			b.Fatalf("handler %d: %d, %d bytes", i, rec.Code, rec.Body.Len())
		}
		ctypes[i] = rec.Header().Get("Content-Type")
	}
	if ctypes[0] != ctypes[1] {
		b.Fatalf("Content-Type: echo %q, zealgo %q", ctypes[0], ctypes[1])
	}
}

// compare runs b.N requests to each of do(0) (echo) and do(1) (zealgo),
// alternating small batches, and reports the time per request of each and
// their ratio zealgo/echo: the median of the per-round ratios, which a
// burst of load from elsewhere on the machine does not skew.
func compare(b *testing.B, do func(i int)) {
	const batch = 16
	for i := 0; i < 200; i++ { // warm up: connections, caches, compiled paths
		do(0)
		do(1)
	}
	var spent [2]time.Duration
	var ratios []float64
	b.ReportAllocs()
	b.ResetTimer()
	for done, round := 0, 0; done < b.N; round++ {
		n := min(batch, b.N-done)
		var t [2]time.Duration
		for k := 0; k < 2; k++ {
			which := (k + round) % 2
			start := time.Now()
			for j := 0; j < n; j++ {
				do(which)
			}
			t[which] = time.Since(start)
		}
		spent[0] += t[0]
		spent[1] += t[1]
		ratios = append(ratios, float64(t[1])/float64(t[0]))
		done += n
	}
	b.StopTimer()
	sort.Float64s(ratios)
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(b.N), "echo-ns/req")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(b.N), "zealgo-ns/req")
	b.ReportMetric(ratios[len(ratios)/2], "ratio")
}
