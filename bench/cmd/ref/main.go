// Command ref is the reference of the benchmarks: an Echo v5 app with the
// benchmark handlers compiled in, and Echo's static file handler, in one of
// three shapes (--shape):
//
//	bare   the handlers as the interpreted files write them (maps), no
//	       middleware: the reference every ratio of bench/RESULTS.md is
//	       taken against
//	typed  the same answers from typed structs, no middleware: the
//	       ceiling of what Go and Echo can do with these requests
//	full   the bare handlers behind the middleware that gives what zealgo
//	       gives by default: request id, recover, secure headers, a body
//	       limit and a time limit on the handler, with the server's header,
//	       write and idle timeouts
//
//	ref --addr 127.0.0.1:PORT --root DIR [--shape bare|typed|full]
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"
	"github.com/zealgo/zealgo/bench/benchlib"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
	root := flag.String("root", ".", "application root; its public/ is served as static files")
	shape := flag.String("shape", "bare", "bare, typed or full (see the command's doc)")
	flag.Parse()
	e, err := newShape(*shape, *root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log.Fatal(newServer(*addr, e, *shape == "full").ListenAndServe())
}

// newShape returns the reference app of the given shape.
func newShape(shape, root string) (*echo.Echo, error) {
	switch shape {
	case "bare":
		return newRef(root), nil
	case "typed":
		return newTyped(root), nil
	case "full":
		return newFull(root), nil
	}
	return nil, fmt.Errorf("ref: unknown shape %q (bare, typed or full)", shape)
}

// newServer returns the HTTP server of the reference; with timeouts, the
// header, write and idle timeouts zealgo's serve sets by default.
func newServer(addr string, h http.Handler, timeouts bool) *http.Server {
	srv := &http.Server{Addr: addr, Handler: h}
	if timeouts {
		srv.ReadHeaderTimeout = 10 * time.Second
		srv.WriteTimeout = 60 * time.Second
		srv.IdleTimeout = 120 * time.Second
	}
	return srv
}

// newRef returns the bare Echo app serving root/public as static files.
func newRef(root string) *echo.Echo {
	e := echo.New()
	// The same handler as api/hello.go, compiled.
	e.GET("/api/hello", func(c *echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"message": "hello"})
	})
	// The same handler as api/php/get.go, compiled.
	e.GET("/api/php/get", func(c *echo.Context) error {
		return c.JSON(http.StatusOK, benchlib.QueryParams(c.QueryParams()))
	})
	// The same work as api/bench/work.go, compiled.
	e.GET("/api/bench/work", func(c *echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"count": 100, "records": benchlib.Build(100)})
	})
	e.Static("/", filepath.Join(root, "public"))
	return e
}

// newFull returns the bare app behind the middleware that gives what
// zealgo gives by default.
func newFull(root string) *echo.Echo {
	e := newRef(root)
	e.Use(middleware.RequestID(), middleware.Recover(), middleware.Secure(),
		middleware.BodyLimit(8<<20), middleware.ContextTimeout(30*time.Second))
	return e
}
