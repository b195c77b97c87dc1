package host_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// hostileTargets are request targets whose paths the access log must
// escape: quotes, backslashes, control characters, U+2028, invalid UTF-8,
// spaces and '=', wide runes, markup, a long path.
var hostileTargets = []string{
	"/api/echo?secret=1", "/a%22b%5Cc", "/x%00%01%1f%7f%0A%0D%09", "/%E2%80%A8%E2%80%A9", "/%FF%FEbad",
	"/a%20b=c", "/%E6%97%A5%E6%9C%AC/%F0%9F%99%82", "/%3C/script%3E&amp;", "/api/echo/" + strings.Repeat("long", 80),
}

// sentRequest is a request's method and path, as the server decodes it.
type sentRequest struct{ method, path string }

// rawGet sends method target on a connection of its own, exactly as
// written, and returns the response's status and request id.
func rawGet(t *testing.T, addr, method, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", method, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Request-Id")
}

// textValue is how slog's text handler writes v.
func textValue(v string) string {
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey {
			return slog.Attr{}
		}
		return a
	}})).Info("", "v", v)
	return strings.TrimSuffix(strings.TrimPrefix(b.String(), "v="), "\n")
}

// TestServeAccessLog: the serve command with --access-log writes one
// record per request, in JSON and in text, with hostile paths escaped as
// slog escapes them (every JSON line decodes to the path the server
// saw); the records still in the log's buffer when the server stops are
// written before the command returns.
func TestServeAccessLog(t *testing.T) {
	t.Setenv(host.SessionRedisEnv, "")
	t.Setenv(host.DBEnv, "")
	root := testutil.WriteTree(t, map[string]string{
		"api/echo.go":       "//go:build ignore\n\npackage main\n\nvar echo = func() any { return map[string]any{\"ok\": true} }\n",
		"public/index.html": "home",
	})
	const rounds = 20
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			addr, stderr, stop := serveInProcess(t, root, "--access-log", "--log-format", format)
			testutil.WaitFor(t, 15*time.Second, "the server", func() bool {
				c, err := net.Dial("tcp", addr)
				if err == nil {
					c.Close()
				}
				return err == nil
			})
			ids := map[string]sentRequest{}
			for i := 0; i < rounds; i++ {
				for _, target := range hostileTargets {
					method := "GET"
					if i%5 == 4 {
						method = "BREW"
					}
					u, err := url.ParseRequestURI(target)
					if err != nil {
						t.Fatal(err)
					}
					_, id := rawGet(t, addr, method, target)
					ids[id] = sentRequest{method, u.Path}
				}
			}
			// At once: the last records are still in the buffer.
			if code := stop(); code != 0 {
				t.Fatalf("serve exited %d:\n%.2000s", code, stderr)
			}
			logs := strings.TrimSuffix(stderr.String(), "\n")
			if format == "json" {
				checkJSONAccessLog(t, logs, ids)
				return
			}
			var records int
			for _, line := range strings.Split(logs, "\n") {
				if !strings.Contains(line, " msg=request ") {
					continue
				}
				records++
				id := between(line, " request_id=", " ")
				want, ok := ids[id]
				if !ok || !strings.Contains(line, " method="+want.method+" path="+textValue(want.path)+" status=") {
					t.Errorf("access record %q, want %+v", line, want)
				}
			}
			if records != len(ids) {
				t.Errorf("%d access records for %d requests", records, len(ids))
			}
		})
	}
}

// checkJSONAccessLog checks that every line of logs is a JSON object and
// that each request of ids has its access record.
func checkJSONAccessLog(t *testing.T, logs string, ids map[string]sentRequest) {
	t.Helper()
	records := matchAccessRecords(t, logs, ids, func(line, _ string, rec map[string]any, want sentRequest) {
		// Each byte of invalid UTF-8 is written as U+FFFD.
		if rec["method"] != want.method || rec["path"] != string([]rune(want.path)) || rec["level"] != "INFO" {
			t.Errorf("access record %s, want %+v", line, want)
		}
	})
	if len(ids) != 0 {
		t.Errorf("%d access records; %d requests without one: %v", records, len(ids), ids)
	}
}

// matchAccessRecords decodes every line of logs as a JSON object and calls
// check with each access record and the request of ids its request id
// names, which it removes from ids; a record naming no request of ids is
// an error. It returns the number of access records.
func matchAccessRecords[T any](t *testing.T, logs string, ids map[string]T, check func(line, id string, rec map[string]any, want T)) int {
	t.Helper()
	records := 0
	for _, line := range strings.Split(logs, "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is no JSON object: %q: %v", line, err)
		}
		if rec["msg"] != "request" {
			continue
		}
		records++
		id, _ := rec["request_id"].(string)
		want, ok := ids[id]
		if !ok {
			t.Errorf("access record with an unknown request id: %s", line)
			continue
		}
		delete(ids, id)
		check(line, id, rec, want)
	}
	return records
}

// serveInProcess runs the serve command in this process on a fresh
// address, with args after --root, --addr and --data. stop cancels it and
// returns its exit code.
func serveInProcess(t *testing.T, root string, args ...string) (addr string, stderr *testutil.Buffer, stop func() int) {
	t.Helper()
	addr = testutil.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stderr = &testutil.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- host.New().Run(ctx, append([]string{"serve", "--root", root, "--addr", addr, "--data", t.TempDir()}, args...),
			io.Discard, stderr)
	}()
	return addr, stderr, func() int { cancel(); return <-done }
}

// TestServeAccessLogTraced: with tracing on (from the OTEL_* variables),
// the serve command's access record of a request that carries a W3C
// traceparent names the caller's trace and the request's span.
func TestServeAccessLogTraced(t *testing.T) {
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer col.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv(host.SessionRedisEnv, "")
	t.Setenv(host.DBEnv, "")
	root := testutil.WriteTree(t, map[string]string{"public/index.html": "home"})
	addr, stderr, stop := serveInProcess(t, root, "--access-log", "--log-format", "json")
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	var id string
	testutil.WaitFor(t, 15*time.Second, "the server", func() bool {
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		req.Header.Set("Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		id = resp.Header.Get("X-Request-Id")
		return resp.StatusCode == 200
	})
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%.2000s", code, stderr)
	}
	line := logLineWith(stderr.String(), `"msg":"request"`, `"request_id":"`+id+`"`)
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("no access record of request %s: %v\n%s", id, err, stderr)
	}
	if span, _ := rec["span_id"].(string); rec["trace_id"] != traceID || len(span) != 16 || span == "00f067aa0ba902b7" {
		t.Errorf("access record %s: want trace_id %s and the request's own span_id", line, traceID)
	}
}
