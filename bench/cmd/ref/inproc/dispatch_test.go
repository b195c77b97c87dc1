//go:build ignore

// Part of the Echo reference (Echo is imported only in host/ and here).
// This file is copied, without its build line, beside the main package of
// the program `zealgo build` generates for bench/app (bench/inproc.sh): it
// compares the request path of the built handlers with bare Echo's in
// process, through a ResponseWriter that records nothing, so that neither
// the network nor net/http counts.
package main

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/zealgo/zealgo/bench/benchlib"
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/symbols"
)

// nopWriter keeps nothing but the status and the byte count. It can be
// hijacked, as net/http's writer can, so that the execution limit takes
// the path it takes under a server.
type nopWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) WriteHeader(code int)        { w.status = code }
func (w *nopWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }
func (w *nopWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	panic("inproc: hijacked")
}

// serve runs b.N requests for target on h.
func serve(b *testing.B, h http.Handler, target string) {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	w := &nopWriter{h: http.Header{}}
	h.ServeHTTP(w, r)
	if w.status != http.StatusOK && w.status != 0 || w.n == 0 {
		b.Fatalf("%s: status %d, %d bytes", target, w.status, w.n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// app returns the application over bench/app (ZBENCH_ROOT) with the
// configuration changed by conf; its handlers are the compiled ones.
func app(b *testing.B, conf func(*host.Config)) http.Handler {
	a := host.New(host.WithRoot(os.Getenv("ZBENCH_ROOT")), host.WithLogOutput(io.Discard, slog.LevelError), host.WithConfig(conf))
	a.Symbols(symbols.Symbols)
	h, err := a.Handler()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return h
}

// BenchmarkBuilt serves scenarios 0 and 1 by bare Echo (the reference),
// by the built handlers as configured by default, and with the execution
// limit, the frame headers and the write timeout off (the framework's
// features against its structure).
func BenchmarkBuilt(b *testing.B) {
	e := echo.New()
	e.GET("/api/hello", func(c *echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"message": "hello"})
	})
	e.GET("/api/php/get", func(c *echo.Context) error {
		return c.JSON(http.StatusOK, benchlib.QueryParams(c.QueryParams()))
	})
	for _, tc := range []struct{ name, target string }{
		{"hello", "/api/hello"},
		{"get", "/api/php/get?a=1&b=two"},
	} {
		b.Run(tc.name+"/echo", func(b *testing.B) { serve(b, e, tc.target) })
		b.Run(tc.name+"/zealgo", func(b *testing.B) { serve(b, app(b, func(*host.Config) {}), tc.target) })
		b.Run(tc.name+"/zealgo-bare", func(b *testing.B) {
			serve(b, app(b, func(c *host.Config) { c.MaxExecutionTime, c.FrameAncestors, c.WriteTimeout = 0, "", 0 }), tc.target)
		})
	}
}
