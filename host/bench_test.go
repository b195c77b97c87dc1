package host_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/zealgo/zealgo/bench/benchlib"
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/interp"
	"github.com/zealgo/zealgo/symbols"
)

// The handler files of the benchmarks: the sample's /api/php/get, a
// handler that does nothing but return, and 100 records built in the
// interpreter.
const (
	benchGetFile = `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var get = func(api *host.API) any {
	params := map[string]any{}
	for k, v := range api.Req.Get {
		if len(v) == 1 {
			params[k] = v[0]
		} else {
			params[k] = v
		}
	}
	return map[string]any{"query_params": params, "async": true}
}
`
	benchNoopFile = `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var noop = func(api *host.API) any { return "ok" }
`
	benchWorkFile = `//go:build ignore

package main

import (
	"strconv"

	"github.com/zealgo/zealgo/host"
)

var work = func(api *host.API) any {
	n := 100
	recs := make([]map[string]any, 0, n)
	for i := 0; i < n; i++ {
		recs = append(recs, map[string]any{
			"id":     i,
			"name":   "record " + strconv.Itoa(i),
			"active": i%2 == 0,
			"score":  float64(i) * 1.5,
			"tags":   []string{"alpha", "beta"},
		})
	}
	return map[string]any{"count": n, "records": recs}
}
`
)

// benchWriter is a reusable ResponseWriter, so that the benchmarks count
// the server's allocations, not a recorder's.
type benchWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) WriteHeader(code int)        { w.status = code }
func (w *benchWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

func (w *benchWriter) reset() {
	clear(w.h)
	w.status, w.n = 0, 0
}

// benchServe serves the request for target on h b.N times and checks the
// status of the last answer.
func benchServe(b *testing.B, h http.Handler, target string) {
	b.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	w := &benchWriter{h: http.Header{}}
	h.ServeHTTP(w, r) // compile and warm up outside the timing
	if w.status != 0 && w.status != http.StatusOK {
		b.Fatalf("%s: status %d", target, w.status)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.reset()
		h.ServeHTTP(w, r)
	}
	b.StopTimer()
	if w.status != 0 && w.status != http.StatusOK || w.n == 0 {
		b.Fatalf("%s: status %d, %d bytes", target, w.status, w.n)
	}
}

// benchApp starts an application over the benchmark handler files.
func benchApp(b *testing.B) http.Handler {
	b.Helper()
	root := testutil.WriteTree(b, map[string]string{
		"api/php/get.go":    benchGetFile,
		"api/bench/noop.go": benchNoopFile,
		"api/bench/work.go": benchWorkFile,
	})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	h, err := app.Handler()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { app.Close() })
	return h
}

// benchEcho is the reference: bare Echo with the same handlers compiled.
func benchEcho() http.Handler {
	e := echo.New()
	e.GET("/api/php/get", func(c *echo.Context) error {
		return c.JSON(http.StatusOK, benchlib.QueryParams(c.QueryParams()))
	})
	e.GET("/api/bench/noop", func(c *echo.Context) error { return c.HTML(http.StatusOK, "ok") })
	e.GET("/api/bench/work", func(c *echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"count": 100, "records": benchlib.Build(100)})
	})
	return e
}

// BenchmarkDispatch compares each endpoint served by the dispatcher
// (interpreted) with the same handler compiled into bare Echo: the
// difference of ns/op is the framework's and the interpreter's cost per
// request, and allocs/op its allocations.
func BenchmarkDispatch(b *testing.B) {
	targets := []struct{ name, target string }{
		{"noop", "/api/bench/noop"},
		{"get", "/api/php/get?a=1&b=two"},
		{"work100", "/api/bench/work"},
	}
	for _, tc := range targets {
		b.Run(tc.name+"/echo", func(b *testing.B) { benchServe(b, benchEcho(), tc.target) })
		b.Run(tc.name+"/zealgo", func(b *testing.B) { benchServe(b, benchApp(b), tc.target) })
	}
}

// BenchmarkInterpFloor calls the handler funcs of BenchmarkDispatch
// straight, with no framework around them: what Yaegi itself costs per
// call (its func wrapper makes a frame, a reflect.New per local and a
// type per argument), the floor under BenchmarkDispatch's zealgo rows.
// "assert" calls the func value through the type assertion made once (as
// handler.go does for the common shapes), "reflect" through
// reflect.Value.Call (as it does for the others).
func BenchmarkInterpFloor(b *testing.B) {
	for _, tc := range []struct{ name, file, src string }{
		{"noop", "api/bench/noop.go", benchNoopFile},
		{"get", "api/php/get.go", benchGetFile},
	} {
		prog, err := interp.CompileSource(tc.file, []byte(tc.src), interp.Options{Symbols: []interp.Exports{symbols.Symbols}})
		if err != nil {
			b.Fatal(err)
		}
		name := strings.TrimSuffix(tc.file[strings.LastIndexByte(tc.file, '/')+1:], ".go")
		v, _ := prog.Var(name)
		api := &host.API{Req: &host.Request{Get: url.Values{"a": {"1"}, "b": {"two"}}}}
		b.Run(tc.name+"/assert", func(b *testing.B) {
			f := v.Interface().(func(*host.API) any)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if f(api) == nil {
					b.Fatal("nil")
				}
			}
		})
		b.Run(tc.name+"/reflect", func(b *testing.B) {
			args := []reflect.Value{reflect.ValueOf(api)}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if v.Call(args)[0].Interface() == nil {
					b.Fatal("nil")
				}
			}
		})
	}
}
