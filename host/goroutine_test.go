package host_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// TestGoroutinePanicKeepsServer: a goroutine started by a handler that
// panics is logged with its file and stack, and the server goes on
// serving.
func TestGoroutinePanicKeepsServer(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"api/bg/boom.go": `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

func crash(n int) { var m map[int]int; m[n] = n }

var boom = func(api *host.API) any {
	go func() { var m map[string]int; m["x"] = 1 }()
	go crash(1)
	return "started"
}
`,
	})
	get := func(path string) (int, string) {
		resp, err := http.Get(ta.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/api/bg/boom"); code != 200 || body != "started" {
		t.Fatalf("first: %d %q", code, body)
	}
	testutil.WaitFor(t, 10*time.Second, "two goroutine panics in the log", func() bool {
		return strings.Count(ta.logs.String(), `msg="panic in a goroutine" file=api/bg/boom.go`) == 2
	})
	if logs := ta.logs.String(); !strings.Contains(logs, "assignment to entry in nil map") || !strings.Contains(logs, "stack=") {
		t.Errorf("log lacks the panic or its stack:\n%s", logs)
	}
	if code, body := get("/api/bg/boom"); code != 200 || body != "started" {
		t.Fatalf("after the panics: %d %q", code, body)
	}
}
