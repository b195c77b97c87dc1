package host_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// TestUseBuildsMiddlewareOnce: global middleware is instantiated once, at
// start-up, so that state it creates in its constructor (a limiter, a pool)
// lives as long as the server; it runs inside the outermost layer, so the
// request already has its id.
func TestUseBuildsMiddlewareOnce(t *testing.T) {
	var built, ran atomic.Int64
	var sawID atomic.Bool
	ta := newTestAppWith(t, map[string]string{"api/ok.go": "package main\n\nvar ok = func() any { return 1 + 199 }\n"}, func(a *host.App) {
		a.Use(func(next http.Handler) http.Handler {
			built.Add(1)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ran.Add(1)
				sawID.Store(w.Header().Get("X-Request-Id") != "")
				next.ServeHTTP(w, r)
			})
		})
	})
	for i := 0; i < 5; i++ {
		if code, _ := get(t, ta.srv.URL+"/api/ok"); code != 200 {
			t.Fatalf("status %d", code)
		}
	}
	if built.Load() != 1 || ran.Load() != 5 || !sawID.Load() {
		t.Fatalf("built %d times, ran %d times, saw request id %v; want 1, 5, true", built.Load(), ran.Load(), sawID.Load())
	}
}
