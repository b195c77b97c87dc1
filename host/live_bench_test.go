package host_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// BenchmarkRoomBroadcast: messages per second through a room of 10
// WebSocket clients on loopback, broadcast by App.Broadcast on the same
// instance (one) or on another instance sharing a NATS server (two). An
// op is one broadcast; msgs/s counts the messages the clients received.
// At most 128 broadcasts are in flight, so that no client falls a room's
// queue behind.
func BenchmarkRoomBroadcast(b *testing.B) {
	b.Run("one", func(b *testing.B) {
		a := liveBenchApp(b, roomFiles, host.WithRealtime(host.RealtimeConfig{DisableCompression: true}))
		benchRoom(b, a, a)
	})
	b.Run("two", func(b *testing.B) {
		url := sharedNATS(b)
		opts := []host.Option{natsOpts(url), host.WithRealtime(host.RealtimeConfig{DisableCompression: true})}
		benchRoom(b, liveBenchApp(b, roomFiles, opts...), liveBenchApp(b, roomFiles, opts...))
	})
}

// liveBenchApp serves files from a fresh root, as newTestApp does, for a
// benchmark.
func liveBenchApp(b *testing.B, files map[string]string, opts ...host.Option) *testApp {
	root := testutil.WriteTree(b, files)
	logs := &testutil.Buffer{}
	app := host.New(append([]host.Option{host.WithRoot(root), host.WithLogOutput(logs, slog.LevelWarn)}, opts...)...)
	app.Symbols(symbols.Symbols)
	h, err := app.Handler()
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(func() { srv.Close(); app.Close() })
	return &testApp{srv: srv, logs: logs, root: root, app: app}
}

// benchRoom connects 10 clients to the room "bench" on at and broadcasts
// from from.
func benchRoom(b *testing.B, from, at *testApp) {
	const clients, window = 10, 128
	counts := make([]atomic.Int64, clients)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range clients {
		c := dialWS(b, at.srv.URL, "/api/room?name=bench", nil)
		readWS(b, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for counts[i].Load() < int64(b.N) {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
				counts[i].Add(1)
			}
		}()
	}
	least := func() int64 {
		m := counts[0].Load()
		for i := range counts {
			m = min(m, counts[i].Load())
		}
		return m
	}
	msg := strings.Repeat("m", 64)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		for int64(i)-least() >= window {
			runtime.Gosched()
		}
		if err := from.app.Broadcast("bench", msg); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
	d := time.Since(start)
	b.StopTimer()
	if least() < int64(b.N) {
		b.Fatalf("a client got %d of %d messages", least(), b.N)
	}
	b.ReportMetric(float64(b.N*clients)/d.Seconds(), "msgs/s")
	b.ReportMetric(float64(b.N)/d.Seconds(), "broadcasts/s")
}
