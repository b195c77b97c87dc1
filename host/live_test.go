package host_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// versionedEcho is an echo handler that prefixes its replies with a
// version, to tell generations apart.
const versionedEcho = wsHead + `var get = func(api *host.API) any {
	return api.WebSocket(func(ws *host.WebSocket) error {
		for {
			msg, err := ws.Read()
			if err != nil {
				return nil
			}
			if err := ws.Write("%s " + msg); err != nil {
				return nil
			}
		}
	})
}
`

// TestWebSocketSaveKeepsConnections: a save of the handler file while
// 50 connections are open drops none of them, which go on running the
// code that accepted them, while new connections run the new code.
func TestWebSocketSaveKeepsConnections(t *testing.T) {
	ta := newTestApp(t, map[string]string{"api/ver.go": fmt.Sprintf(versionedEcho, "v1")})
	conns := make([]*websocket.Conn, 50)
	for i := range conns {
		conns[i] = dialWS(t, ta.srv.URL, "/api/ver", nil)
		writeWS(t, conns[i], "hi")
		if got := readWS(t, conns[i]); got != "v1 hi" {
			t.Fatalf("connection %d: %q", i, got)
		}
	}
	if err := os.WriteFile(filepath.Join(ta.root, "api/ver.go"), []byte(fmt.Sprintf(versionedEcho, "v2")), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "a new connection on the new code", func() bool {
		c := dialWS(t, ta.srv.URL, "/api/ver", nil)
		defer c.CloseNow()
		writeWS(t, c, "hi")
		return readWS(t, c) == "v2 hi"
	})
	dropped := 0
	for i, c := range conns {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.Write(ctx, websocket.MessageText, []byte("again"))
		var b []byte
		if err == nil {
			_, b, err = c.Read(ctx)
		}
		cancel()
		if err != nil || string(b) != "v1 again" {
			dropped++
			t.Errorf("connection %d after the save: %q %v", i, b, err)
		}
	}
	t.Logf("after the save: %d of %d connections dropped", dropped, len(conns))
}

// TestWebSocketLimitsAndDrain: under Serve, with an execution limit and
// a write timeout of one second, a WebSocket and a stream live on past
// both; a graceful shutdown closes the WebSocket with 1001 after the
// drain delay and ends the stream.
func TestWebSocketLimitsAndDrain(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"api/echo.go": wsFiles["api/echo.go"], "api/tick.go": sseFiles["api/tick.go"]})
	logs := &testutil.Buffer{}
	app := host.New(host.WithRoot(root), host.WithLogOutput(logs, slog.LevelInfo), host.WithMaxExecutionTime(time.Second),
		host.WithConfig(func(c *host.Config) {
			c.WriteTimeout = time.Second
			c.Ops.DrainDelay = 200 * time.Millisecond
		}))
	app.Symbols(symbols.Symbols)
	s := serveLoopback(t, app)
	base := "http://" + s.addr
	testutil.WaitFor(t, 15*time.Second, "the server", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	c := dialWS(t, base, "/api/echo", nil)
	resp, err := http.Get(base + "/api/tick")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	<-time.After(2500 * time.Millisecond) // past both limits
	writeWS(t, c, "late")
	if got := readWS(t, c); got != "echo: late" {
		t.Fatalf("after the limits: %q", got)
	}
	if line, err := events.ReadString('\n'); err != nil || !strings.HasPrefix(line, "id: ") {
		t.Fatalf("the stream after the limits: %q %v", line, err)
	}
	start := time.Now()
	s.shutdown()
	if st := closeStatus(t, c); st != websocket.StatusGoingAway {
		t.Fatalf("close status at shutdown %v, want 1001", st)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("closed %v after the shutdown began, before the drain delay", d)
	}
	if err := s.wait(t); err != nil {
		t.Fatal(err)
	}
}

// sseFiles: a stream of numbered events that resumes after the client's
// Last-Event-ID, and a stream that waits for its client to leave.
var sseFiles = map[string]string{
	"api/tick.go": `//go:build ignore

package main

import (
	"strconv"
	"time"

	"github.com/zealgo/zealgo/host"
)

var tick = func(api *host.API) any {
	return api.SSE(func(s *host.SSE) error {
		n, _ := strconv.Atoi(s.LastEventID())
		for {
			n++
			if err := s.Send(host.Event{ID: strconv.Itoa(n), Data: "tick " + strconv.Itoa(n)}); err != nil {
				return nil
			}
			if !s.Wait(100 * time.Millisecond) {
				return nil
			}
		}
	})
}
`,
	"api/quiet.go": `//go:build ignore

package main

import (
	"errors"

	"github.com/zealgo/zealgo/host"
)

var quiet = func(api *host.API) any {
	return api.SSE(func(s *host.SSE) error {
		if err := s.Send(host.Event{Event: "hello", Data: "a\nb"}); err != nil {
			return err
		}
		<-s.Context().Done()
		return errors.New("the client left " + api.String("who"))
	})
}
`,
}

// readEvent reads one event (up to its blank line), skipping comments.
func readEvent(t *testing.T, r *bufio.Reader) []string {
	t.Helper()
	var lines []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (%q)", err, lines)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && len(lines) > 0:
			return lines
		case line == "" || strings.HasPrefix(line, ":"):
		default:
			lines = append(lines, line)
		}
	}
}

// TestSSEReconnect: a client that reconnects with the Last-Event-ID of
// the last event it got resumes after it.
func TestSSEReconnect(t *testing.T) {
	ta := newTestApp(t, sseFiles)
	get := func(last string) (*http.Response, *bufio.Reader) {
		req, _ := http.NewRequest("GET", ta.srv.URL+"/api/tick", nil)
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		return resp, bufio.NewReader(resp.Body)
	}
	resp, r := get("")
	readEvent(t, r)
	ev := readEvent(t, r)
	resp.Body.Close()
	if strings.Join(ev, "|") != "id: 2|data: tick 2" {
		t.Fatalf("second event %q", ev)
	}
	resp, r = get("2")
	defer resp.Body.Close()
	if ev := readEvent(t, r); strings.Join(ev, "|") != "id: 3|data: tick 3" {
		t.Fatalf("after reconnecting with Last-Event-ID 2: %q", ev)
	}
}

// TestSSEHeartbeatAndLeave: a quiet stream sends a comment line every
// Config.Realtime.Heartbeat; when the client leaves, its context is done
// and the handler returns.
func TestSSEHeartbeatAndLeave(t *testing.T) {
	ta := newTestApp(t, sseFiles, host.WithRealtime(host.RealtimeConfig{Heartbeat: 50 * time.Millisecond}))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ta.srv.URL+"/api/quiet?who=ada", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // on failure too: the server waits for the stream's end
	defer cancel()
	r := bufio.NewReader(resp.Body)
	if ev := readEvent(t, r); strings.Join(ev, "|") != "event: hello|data: a|data: b" {
		t.Fatalf("first event %q", ev)
	}
	beats := 0
	for beats < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == ": ping\n" {
			beats++
		}
	}
	cancel()
	resp.Body.Close()
	testutil.WaitFor(t, 5*time.Second, "the handler's return once the client left", func() bool {
		return strings.Contains(ta.logs.String(), "the client left ada")
	})
}

// roomFiles are wsFiles' room and broadcaster, and a task that
// broadcasts.
var roomFiles = map[string]string{
	"api/room.go": wsFiles["api/room.go"],
	"api/say.go":  wsFiles["api/say.go"],
	"task/announce.go": taskFile("announce", `"github.com/zealgo/zealgo/host"`, `func(app *host.App, room, msg string) any {
	if err := app.Broadcast(room, msg); err != nil {
		return err.Error()
	}
	return "sent"
}`),
}

// TestBroadcastAcrossInstances: two instances sharing one NATS server;
// a broadcast on one reaches the room's clients on both, once each.
func TestBroadcastAcrossInstances(t *testing.T) {
	url := sharedNATS(t)
	a := newTestApp(t, roomFiles, natsOpts(url))
	b := newTestApp(t, roomFiles, natsOpts(url))
	ca := dialWS(t, a.srv.URL, "/api/room?name=hall", nil)
	cb := dialWS(t, b.srv.URL, "/api/room?name=hall", nil)
	readWS(t, ca)
	readWS(t, cb)
	for _, m := range []string{"from-a-1", "from-a-2"} {
		if resp, body := do(t, nil, "GET", a.srv.URL+"/api/say?room=hall&msg="+m, nil); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	do(t, nil, "GET", b.srv.URL+"/api/say?room=hall&msg=from-b", nil)
	// One instance's broadcasts arrive in the order it sent them; the
	// other's may come before or between them (b delivers its own at once,
	// a's come through the server).
	for name, c := range map[string]*websocket.Conn{"a": ca, "b": cb} {
		got := []string{readWS(t, c), readWS(t, c), readWS(t, c)}
		fromA := slices.DeleteFunc(slices.Clone(got), func(m string) bool { return m == "from-b" })
		if len(fromA) != 2 || fromA[0] != "from-a-1" || fromA[1] != "from-a-2" {
			t.Errorf("client on %s got %q, want a's two in order and b's once", name, got)
		}
	}
}

// TestBroadcastFromTask: a task, in its worker process, broadcasts to a
// room whose client is connected to the server, through NATS.
func TestBroadcastFromTask(t *testing.T) {
	t.Parallel()
	ta := newTaskApp(t, roomFiles, 1, true, natsOpts(host.NATSEmbedded))
	c := dialWS(t, ta.srv.URL, "/api/room?name=news", nil)
	readWS(t, c)
	f := ta.run(t, "/task/announce", "news", "from the task")
	if f.err != nil || f.result != "sent" {
		t.Fatalf("task: %v %v", f.result, f.err)
	}
	if got := readWS(t, c); got != "from the task" {
		t.Fatalf("got %q", got)
	}
}

// TestWebSocketThousand: 1,000 WebSockets open at once on loopback, each
// echoing a message; the process's resident memory is logged.
func TestWebSocketThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	ta := newTestApp(t, wsFiles, host.WithConfig(func(c *host.Config) { c.Realtime.DisableCompression = true }))
	const n = 1000
	conns := make([]*websocket.Conn, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := time.Now()
	for w := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 20 {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				c, _, err := websocket.Dial(ctx, wsURL(ta.srv.URL, "/api/echo"), nil)
				if err == nil {
					conns[i] = c
					err = c.Write(ctx, websocket.MessageText, []byte(fmt.Sprint(i)))
				}
				if err == nil {
					var b []byte
					if _, b, err = c.Read(ctx); err == nil && string(b) != fmt.Sprintf("echo: %d", i) {
						err = fmt.Errorf("connection %d got %q", i, b)
					}
				}
				cancel()
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d WebSockets open and echoed in %v; RSS of the test process (server and clients) %s", n, time.Since(start).Round(time.Millisecond), rss())
	for _, c := range conns {
		c.CloseNow()
	}
}

// rss returns the resident memory of this process, from /proc.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// TestLiveMetricsAndAccessLog: the open connections and their messages
// are counted on /metrics, and a WebSocket gets one access-log record,
// at its close, with status 101 and its duration.
func TestLiveMetricsAndAccessLog(t *testing.T) {
	ta := newTestApp(t, wsFiles, host.WithMetrics("127.0.0.1:0"), host.WithAccessLog(true))
	c := dialWS(t, ta.srv.URL, "/api/echo", nil)
	for _, m := range []string{"a", "b", "c"} {
		writeWS(t, c, m)
		readWS(t, c)
	}
	if v := metricValue(scrape(t, ta.app), "zealgo_live_connections", "kind=websocket"); v != 1 {
		t.Errorf("open websockets %v, want 1", v)
	}
	// The server counts a message out once its write returned, which
	// may be after the client read it.
	testutil.WaitFor(t, 5*time.Second, "3 messages in and 3 out", func() bool {
		fams := scrape(t, ta.app)
		return metricValue(fams, "zealgo_live_messages_total", "direction=in", "kind=websocket") == 3 &&
			metricValue(fams, "zealgo_live_messages_total", "direction=out", "kind=websocket") == 3
	})
	if strings.Contains(ta.logs.String(), "path=/api/echo") {
		t.Fatalf("an access record before the close:\n%s", ta.logs)
	}
	c.Close(websocket.StatusNormalClosure, "")
	testutil.WaitFor(t, 5*time.Second, "the access record at the close", func() bool {
		for l := range strings.Lines(ta.logs.String()) {
			if strings.Contains(l, "msg=request") && strings.Contains(l, "path=/api/echo") && strings.Contains(l, "status=101") &&
				strings.Contains(l, "duration=") {
				return true
			}
		}
		return false
	})
	testutil.WaitFor(t, 5*time.Second, "no open websocket", func() bool {
		return metricValue(scrape(t, ta.app), "zealgo_live_connections", "kind=websocket") == 0
	})
	// The connection's lifetime is counted apart from request durations.
	testutil.WaitFor(t, 5*time.Second, "the connection's lifetime", func() bool {
		return metricValue(scrape(t, ta.app), "zealgo_live_connection_duration_seconds", "kind=websocket") == 1
	})
	fams := scrape(t, ta.app)
	if v := metricValue(fams, "zealgo_http_request_duration_seconds", "handler=api/echo.go", "method=GET"); v > 0 {
		t.Errorf("the websocket counted %v times among request durations", v)
	}
	if v := metricValue(fams, "zealgo_http_requests_total", "code=101", "handler=api/echo.go", "method=GET"); v != 1 {
		t.Errorf("requests counted: %v, want 1", v)
	}
}
