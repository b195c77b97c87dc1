package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// corsSetup allows one origin from setup.go.
const corsSetup = `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var setup = func(app *host.App) error {
	app.AllowOrigins(%q)
	return nil
}
`

// corsEcho answers a POST with the X-Custom header it got and its JSON
// body's "a".
const corsEcho = `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var post = func(api *host.API) any {
	var in struct{ A int ` + "`json:\"a\"`" + ` }
	_ = api.Bind(&in)
	return map[string]any{"custom": api.Req.Header.Get("X-Custom"), "a": in.A}
}
`

// TestAllowOriginsBrowser: a page on origin A, allowed by setup.go's
// AllowOrigins, calls the API on origin B from a real Chromium with a JSON
// body, a custom header and credentials: the preflight is answered and the
// POST served. The same page on origin C is blocked by the browser (the
// POST never reaches the API), and C's simple form POST, which a browser
// sends without a preflight, is refused by the cross-origin protection,
// which trusts A.
func TestAllowOriginsBrowser(t *testing.T) {
	chromiumPath := testutil.NeedProgram(t, "chromium", "apt-get install chromium")
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>front</title><h1>front</h1>")
	})
	siteA, siteC := httptest.NewServer(page), httptest.NewServer(page)
	defer siteA.Close()
	defer siteC.Close()

	root := testutil.WriteTree(t, map[string]string{"setup.go": fmt.Sprintf(corsSetup, siteA.URL), "api/echo.go": corsEcho})
	app := host.New(host.WithRoot(root), host.WithLogOutput(&testutil.Buffer{}, slog.LevelDebug))
	app.Symbols(symbols.Symbols)
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string // "METHOD origin status" of every request the API got
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		h.ServeHTTP(rec, r)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %d", r.Method, r.Header.Get("Origin"), rec.status))
		mu.Unlock()
	}))
	defer api.Close()
	defer app.Close()

	ctx := startChromium(t, chromiumPath)
	// fetchFrom runs a fetch of the API in a page of site and returns what
	// the page saw.
	fetchFrom := func(site, js string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, chromedp.Navigate(site+"/"), chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
			t.Fatalf("%s: %v", site, err)
		}
		v, err := chromedp.Run(sctx, chromedp.Evaluate[string](strings.ReplaceAll(js, "API", api.URL), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", site, err)
		}
		return v
	}
	const jsonPost = `fetch("API/api/echo", {method: "POST", credentials: "include",
		headers: {"Content-Type": "application/json", "X-Custom": "yes"}, body: JSON.stringify({a: 7})})
		.then(r => r.text().then(b => r.status + " " + b + " " + r.headers.get("X-Request-Id").length))
		.catch(e => "blocked: " + e.message)`
	const simplePost = `fetch("API/api/echo", {method: "POST", mode: "no-cors", credentials: "include",
		headers: {"Content-Type": "text/plain"}, body: "x"}).then(r => r.type).catch(e => "error: " + e.message)`

	if got := fetchFrom(siteA.URL, jsonPost); got != `200 {"a":7,"custom":"yes"} 16` {
		t.Errorf("from the allowed origin: %s", got)
	}
	if got := fetchFrom(siteC.URL, jsonPost); !strings.HasPrefix(got, "blocked: ") {
		t.Errorf("from another origin: %s, want blocked by the browser", got)
	}
	if got := fetchFrom(siteC.URL, simplePost); got != "opaque" {
		t.Errorf("simple POST from another origin: %s", got)
	}
	if got := fetchFrom(siteA.URL, simplePost); got != "opaque" {
		t.Errorf("simple POST from the allowed origin: %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"OPTIONS " + siteA.URL + " 204", "POST " + siteA.URL + " 200", // preflight, then the call
		"OPTIONS " + siteC.URL + " 204", // preflight without CORS headers: the browser stops there
		"POST " + siteC.URL + " 403",    // refused by the cross-origin protection
		"POST " + siteA.URL + " 200",    // trusted
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("the API got:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// statusRecorder records the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
