package host_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// sleeper returns a handler or page file whose func sleeps for d without
// looking at its context, then returns "woke".
func sleeper(name, d string) string {
	return fmt.Sprintf(`//go:build ignore

package main

import (
	"time"

	"github.com/zealgo/zealgo/host"
)

var %s = func(api *host.API) any {
	time.Sleep(%s)
	return map[string]any{"woke": true}
}
`, name, d)
}

// TestMaxExecutionTime: past the limit an API request gets the 503 JSON
// envelope and a page the 503 error page, with a request id; a handler
// that runs on is logged late, then logged again when it returns; one that
// returns when its context ends is not late; a stream that started before
// the limit runs to its end; a request answered in time keeps its headers.
func TestMaxExecutionTime(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"api/sleepy.go":      sleeper("sleepy", "1200*time.Millisecond"),
		"public/slowpage.go": sleeper("slowpage", "1200*time.Millisecond"),
		"api/polite.go": handlerFile("polite", `<-api.Context().Done()
	return map[string]any{"polite": true}`),
		"api/quick.go": handlerFile("quick", `api.Res.Header().Set("X-Mine", "kept")
	return map[string]any{"quick": true}`),
		"api/stream.go": `package main

import (
	"time"

	"github.com/zealgo/zealgo/host"
)

var stream = func(api *host.API) any {
	return func(yield func(string) bool) {
		if !yield("first,") {
			return
		}
		time.Sleep(500 * time.Millisecond)
		yield("second")
	}
}
`,
	}, host.WithMaxExecutionTime(200*time.Millisecond))
	u := ta.srv.URL

	resp, body := do(t, nil, "GET", u+"/api/sleepy", nil)
	if resp.StatusCode != 503 || errCode(body) != "service_unavailable" || resp.Header.Get("Content-Type") != "application/json" ||
		!strings.Contains(body, "did not answer within 200ms") || resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("api past the limit: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = do(t, nil, "GET", u+"/slowpage", nil, "Accept", "text/html")
	if resp.StatusCode != 503 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "503") ||
		!strings.Contains(body, resp.Header.Get("X-Request-Id")) {
		t.Errorf("page past the limit: %d %v %.300s", resp.StatusCode, resp.Header, body)
	}
	resp, body = do(t, nil, "GET", u+"/slowpage", nil, "Accept", "application/json")
	if resp.StatusCode != 503 || errCode(body) != "service_unavailable" {
		t.Errorf("page past the limit, JSON preferred: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, nil, "GET", u+"/api/polite", nil)
	if resp.StatusCode != 503 {
		t.Errorf("polite: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, nil, "GET", u+"/api/stream", nil)
	if resp.StatusCode != 200 || body != "first,second" {
		t.Errorf("a stream started in time: %d %q", resp.StatusCode, body)
	}
	resp, body = do(t, nil, "GET", u+"/api/quick", nil)
	if resp.StatusCode != 200 || body != `{"quick":true}` || resp.Header.Get("X-Mine") != "kept" || resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("in time: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	for _, path := range []string{"/api/sleepy", "/slowpage"} {
		testutil.WaitFor(t, 10*time.Second, path+" logged late", func() bool {
			return strings.Contains(ta.logs.String(), `a handler runs past its time limit and keeps running`) &&
				strings.Contains(ta.logs.String(), "path="+path+" limit=200ms")
		})
	}
	testutil.WaitFor(t, 10*time.Second, "the late handlers to return", func() bool {
		return strings.Contains(ta.logs.String(), `msg="a late handler returned" late_handlers=0`)
	})
	for _, line := range strings.Split(ta.logs.String(), "\n") {
		if strings.Contains(line, "past its time limit") && (strings.Contains(line, "/api/polite") || strings.Contains(line, "/api/stream")) {
			t.Errorf("logged late: %s", line)
		}
	}
}

// TestMaxExecutionTimeOff: with no limit, a slow handler answers.
func TestMaxExecutionTimeOff(t *testing.T) {
	ta := newTestApp(t, map[string]string{"api/sleepy.go": sleeper("sleepy", "300*time.Millisecond")},
		host.WithMaxExecutionTime(0))
	if resp, body := do(t, nil, "GET", ta.srv.URL+"/api/sleepy", nil); resp.StatusCode != 200 || body != `{"woke":true}` {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// TestTimeoutAliasLate: a handler that runs on past the timeout alias's
// duration is reported late, as the execution limit's are.
func TestTimeoutAliasLate(t *testing.T) {
	src := strings.Replace(sleeper("slow", "600*time.Millisecond"), "var slow", "var middleware = []string{\"timeout:50ms\"}\n\nvar slow", 1)
	ta := newTestApp(t, map[string]string{"api/slow.go": src})
	resp, body := do(t, nil, "GET", ta.srv.URL+"/api/slow", nil)
	if resp.StatusCode != 503 || errCode(body) != "service_unavailable" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	testutil.WaitFor(t, 10*time.Second, "the late report", func() bool {
		return strings.Contains(ta.logs.String(), "path=/api/slow limit=50ms late_handlers=1")
	})
	testutil.WaitFor(t, 10*time.Second, "the late handler to return", func() bool {
		return strings.Contains(ta.logs.String(), `msg="a late handler returned" late_handlers=0`)
	})
}

// TestStalledBodyNotLate: a handler blocked reading a body that never
// comes gets the 503 at its limit (the execution limit's and the timeout
// alias's), its read fails at once, and it is not reported late: a client
// that stalls its body cannot have the process replaced.
func TestStalledBodyNotLate(t *testing.T) {
	read := `return map[string]any{"n": len(api.Req.Body())}`
	ta := newTestApp(t, map[string]string{
		"api/body.go":    handlerFile("body", read),
		"api/aliased.go": handlerFile("aliased", read, "timeout:200ms"),
	}, host.WithMaxExecutionTime(300*time.Millisecond))
	addr := ta.srv.Listener.Addr().String()
	for _, path := range []string{"/api/body", "/api/aliased"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nonly ten b", path)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: no answer: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 503 || errCode(string(body)) != "service_unavailable" {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	time.Sleep(800 * time.Millisecond) // past both limits and their grace
	if strings.Contains(ta.logs.String(), "past its time limit") {
		t.Errorf("a stalled body made a handler late:\n%s", ta.logs)
	}
}

// TestLimitTrailers: under the execution limit, trailers a handler sets
// after its response started reach the client, declared or prefixed.
func TestLimitTrailers(t *testing.T) {
	ta := newTestApp(t, map[string]string{"api/sum.go": `//go:build ignore

package main

import (
	"net/http"

	"github.com/zealgo/zealgo/host"
)

var sum = func(api *host.API) any {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		w.WriteHeader(200)
		w.Write([]byte("body"))
		w.Header().Set("X-Sum", "42")
		w.Header().Set(http.TrailerPrefix+"X-Late", "yes")
	}
}
`}, host.WithMaxExecutionTime(5*time.Second))
	resp, body := do(t, nil, "GET", ta.srv.URL+"/api/sum", nil)
	if resp.StatusCode != 200 || body != "body" || resp.Trailer.Get("X-Sum") != "42" || resp.Trailer.Get("X-Late") != "yes" {
		t.Errorf("%d %q trailers %v", resp.StatusCode, body, resp.Trailer)
	}
}
