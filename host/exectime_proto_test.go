package host_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// busyHeaders is a handler that keeps setting a response header for
// 600ms, across a 200ms limit: the 503 must not touch the header map the
// handler is still using (the race detector sees it if it does).
const busyHeaders = `//go:build ignore

package main

import (
	"time"

	"github.com/zealgo/zealgo/host"
)

var busy = func(api *host.API) any {
	start := time.Now()
	for i := 0; time.Since(start) < 600*time.Millisecond; i++ {
		api.Res.Header().Set("X-Busy", "yes")
		api.Res.Header().Del("X-Busy")
	}
	return map[string]any{"busy": true}
}
`

// limitFiles are the handler files of the tests below.
func limitFiles() map[string]string {
	return map[string]string{
		"api/sleepy.go": sleeper("sleepy", "800*time.Millisecond"),
		"api/busy.go":   busyHeaders,
		"api/quick.go": handlerFile("quick", `api.Res.Header().Set("X-Mine", "kept")
	return map[string]any{"quick": true}`),
	}
}

// checkLimited checks a 503 of the limit: the JSON envelope, its length,
// a request id, and (but for HEAD) its body.
func checkLimited(t *testing.T, what string, resp *http.Response, head bool) {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	n, _ := strconv.Atoi(resp.Header.Get("Content-Length"))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Content-Type") != "application/json" ||
		resp.Header.Get("X-Request-Id") == "" || n == 0 || resp.Header.Get("Date") == "" {
		t.Fatalf("%s: %d %v", what, resp.StatusCode, resp.Header)
	}
	switch {
	case head && len(b) != 0:
		t.Errorf("%s: HEAD answered with a body: %q", what, b)
	case !head && (len(b) != n || errCode(string(b)) != "service_unavailable"):
		t.Errorf("%s: body %q, Content-Length %d", what, b, n)
	}
}

// checkQuick checks that a handler answering within the limit keeps the
// header it set.
func checkQuick(t *testing.T, what string, c *http.Client, base string) {
	t.Helper()
	resp, err := c.Get(base + "/api/quick")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Mine") != "kept" || !strings.Contains(string(b), `"quick":true`) {
		t.Errorf("%s quick: %d %v %s", what, resp.StatusCode, resp.Header, b)
	}
}

// lateReturned waits until n handlers past their limit have returned.
func lateReturned(t *testing.T, ta *testApp, n int) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, fmt.Sprintf("%d late handlers to return", n), func() bool {
		return strings.Count(ta.logs.String(), `msg="a late handler returned"`) == n
	})
}

// TestLimitHTTP1: over HTTP/1, past the limit, GET and HEAD get a whole
// 503 (HEAD without a body) on the connection taken over from a handler
// that still sets headers; a quick handler's own headers go out.
func TestLimitHTTP1(t *testing.T) {
	ta := newTestApp(t, limitFiles(), host.WithMaxExecutionTime(200*time.Millisecond))
	u := ta.srv.URL
	for _, path := range []string{"/api/busy", "/api/sleepy"} {
		resp, err := http.Get(u + path)
		if err != nil {
			t.Fatal(err)
		}
		checkLimited(t, "GET "+path, resp, false)
		if !resp.Close {
			t.Errorf("GET %s: the connection stays open: %v", path, resp.Header)
		}
		resp, err = http.Head(u + path)
		if err != nil {
			t.Fatal(err)
		}
		checkLimited(t, "HEAD "+path, resp, true)
	}
	checkQuick(t, "HTTP/1", http.DefaultClient, u)
	lateReturned(t, ta, 4) // let the handlers past their limit end within the test
}

// TestLimitHTTP2: over HTTP/2, whose connection cannot be taken over, the
// limit keeps the handler's header apart until the response starts: the
// 503 and a quick handler's own headers come out as over HTTP/1.
func TestLimitHTTP2(t *testing.T) {
	ta := newTestApp(t, limitFiles(), host.WithMaxExecutionTime(200*time.Millisecond))
	srv := httptest.NewUnstartedServer(ta.srv.Config.Handler)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	c := srv.Client()
	for _, path := range []string{"/api/busy", "/api/sleepy"} {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ProtoMajor != 2 {
			t.Fatalf("%s: served over %s", path, resp.Proto)
		}
		checkLimited(t, "HTTP/2 GET "+path, resp, false)
	}
	checkQuick(t, "HTTP/2", c, srv.URL)
	lateReturned(t, ta, 2)
}

// TestLimitAfterQuickAndIdle: the limit's timer, pending across quick
// requests and resting while none runs, still answers 503 to a slow
// request that follows quick ones within the limit, or an idle spell
// longer than it.
func TestLimitAfterQuickAndIdle(t *testing.T) {
	ta := newTestApp(t, limitFiles(), host.WithMaxExecutionTime(300*time.Millisecond))
	u := ta.srv.URL
	quick := func() {
		resp, err := http.Get(u + "/api/quick")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("quick: %d", resp.StatusCode)
		}
	}
	for i := 0; i < 20; i++ { // quick requests over most of a limit
		quick()
		time.Sleep(12 * time.Millisecond)
	}
	resp, err := http.Get(u + "/api/sleepy")
	if err != nil {
		t.Fatal(err)
	}
	checkLimited(t, "slow after quick ones", resp, false)

	quick()
	time.Sleep(700 * time.Millisecond) // longer than the limit with nothing under way
	resp, err = http.Get(u + "/api/sleepy")
	if err != nil {
		t.Fatal(err)
	}
	checkLimited(t, "slow after an idle spell", resp, false)
	lateReturned(t, ta, 2)
}
