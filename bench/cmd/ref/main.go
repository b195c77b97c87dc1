// Command ref is the reference of the benchmarks: a bare Echo app with the
// benchmark handlers compiled in, and Echo's static file handler.
//
//	ref --addr 127.0.0.1:PORT --root DIR
package main

import (
	"flag"
	"log"
	"net/http"
	"path/filepath"

	"github.com/labstack/echo/v4"
	"github.com/zealgo/zealgo/bench/benchlib"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
	root := flag.String("root", ".", "application root; its public/ is served as static files")
	flag.Parse()
	log.Fatal(newRef(*root).Start(*addr))
}

// newRef returns the bare Echo app serving root/public as static files.
func newRef(root string) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// The same handler as api/hello.go, compiled.
	e.GET("/api/hello", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"message": "hello"})
	})
	// The same handler as api/php/get.go, compiled.
	e.GET("/api/php/get", func(c echo.Context) error {
		return c.JSON(http.StatusOK, benchlib.QueryParams(c.QueryParams()))
	})
	// The same work as api/bench/work.go, compiled.
	e.GET("/api/bench/work", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"count": 100, "records": benchlib.Build(100)})
	})
	e.Static("/", filepath.Join(root, "public"))
	return e
}
