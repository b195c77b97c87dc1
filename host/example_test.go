package host_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/symbols"
)

// An application serves the handler files under its root: this one writes
// api/hello.go and asks for /api/hello.
func Example() {
	root, _ := os.MkdirTemp("", "zealgo-example")
	defer os.RemoveAll(root)
	os.MkdirAll(filepath.Join(root, "api"), 0o755)
	os.WriteFile(filepath.Join(root, "api", "hello.go"), []byte(`package main

import "github.com/zealgo/zealgo/host"

var hello = func(api *host.API) any {
	return map[string]any{"hello": api.String("name")}
}
`), 0o644)

	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, 0))
	app.Symbols(symbols.Symbols)
	h, err := app.Handler()
	if err != nil {
		panic(err)
	}
	defer app.Close()

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/hello?name=gopher", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println(rec.Body.String())
	// Output:
	// 200 application/json
	// {"hello":"gopher"}
}

// A handler that returns an error with a status keeps it; the body is the
// JSON error envelope.
func ExampleNewError() {
	err := host.NewError(409, "name_taken", "that name is taken")
	fmt.Println(err.Status, err)
	// Output: 409 zealgo: name_taken: that name is taken
}
