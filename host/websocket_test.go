package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zealgo/zealgo/host"
)

const wsHead = "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n"

// wsFiles: an echo (mode 2), a JSON echo that reads a route parameter, a
// room member, a broadcaster, and a handler that panics.
var wsFiles = map[string]string{
	"api/echo.go": wsHead + `var get = func(api *host.API) any {
	return api.WebSocket(func(ws *host.WebSocket) error {
		for {
			msg, err := ws.Read()
			if err != nil {
				return nil
			}
			if err := ws.Write("echo: " + msg); err != nil {
				return nil
			}
		}
	})
}
`,
	"api/json/[who].go": wsHead + `type msg struct {
	N   int    ` + "`json:\"n\"`" + `
	Who string ` + "`json:\"who\"`" + `
}

var who = func(api *host.API) any {
	return api.WebSocket(func(ws *host.WebSocket) error {
		for {
			var m msg
			if err := ws.ReadJSON(&m); err != nil {
				return nil
			}
			m.N *= 2
			m.Who = api.Param("who")
			if err := ws.WriteJSON(m); err != nil {
				return nil
			}
		}
	})
}
`,
	"api/room.go": wsHead + `var room = func(api *host.API) any {
	name := api.String("name")
	return api.WebSocket(func(ws *host.WebSocket) error {
		ws.Join(name)
		if err := ws.Write("joined " + name); err != nil {
			return nil
		}
		for {
			if _, err := ws.Read(); err != nil {
				return nil
			}
		}
	})
}
`,
	"api/say.go": wsHead + `var say = func(api *host.API) any {
	if err := api.App().Broadcast(api.String("room"), api.String("msg")); err != nil {
		return err
	}
	return map[string]any{"ok": true}
}
`,
	"api/boom.go": wsHead + `var boom = func(api *host.API) any {
	return api.WebSocket(func(ws *host.WebSocket) error {
		if _, err := ws.Read(); err != nil {
			return nil
		}
		var m map[string]int
		m["x"] = 1 // panics
		return nil
	})
}
`,
}

// wsURL returns the ws:// URL of path on the test server.
func wsURL(base, path string) string { return "ws" + strings.TrimPrefix(base, "http") + path }

// dialWS opens a WebSocket to path, closed when the test ends.
func dialWS(t testing.TB, base, path string, opts *websocket.DialOptions) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, wsURL(base, path), opts)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", path, err, resp)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// readWS reads one message within 5s.
func readWS(t testing.TB, c *websocket.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(b)
}

func writeWS(t testing.TB, c *websocket.Conn, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// closeStatus reads until the connection closes and returns its status.
func closeStatus(t testing.TB, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// TestWebSocketEcho: text messages go back and forth, with
// permessage-deflate negotiated; the client's close ends the handler.
func TestWebSocketEcho(t *testing.T) {
	ta := newTestApp(t, wsFiles)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, wsURL(ta.srv.URL, "/api/echo"), &websocket.DialOptions{CompressionMode: websocket.CompressionNoContextTakeover})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Errorf("no permessage-deflate negotiated: %q", ext)
	}
	for _, m := range []string{"hello", strings.Repeat("x", 4000), "héllo"} {
		writeWS(t, c, m)
		if got := readWS(t, c); got != "echo: "+m {
			t.Fatalf("got %.40q, want echo of %.40q", got, m)
		}
	}
	if err := c.Close(websocket.StatusNormalClosure, "bye"); err != nil {
		t.Fatal(err)
	}
}

// TestWebSocketJSON: ReadJSON and WriteJSON, with a route parameter read
// inside the connection.
func TestWebSocketJSON(t *testing.T) {
	ta := newTestApp(t, wsFiles)
	c := dialWS(t, ta.srv.URL, "/api/json/ada", nil)
	writeWS(t, c, `{"n":21}`)
	var got struct {
		N   int
		Who string
	}
	if err := json.Unmarshal([]byte(readWS(t, c)), &got); err != nil || got.N != 42 || got.Who != "ada" {
		t.Fatalf("got %+v %v", got, err)
	}
	writeWS(t, c, `not json`)
	if st := closeStatus(t, c); st != websocket.StatusNormalClosure {
		t.Errorf("after a message that is no JSON the handler returned: close %v, want 1000", st)
	}
}

// TestWebSocketNotUpgrade: a plain GET of a WebSocket handler answers 426
// in the JSON envelope, with Upgrade: websocket.
func TestWebSocketNotUpgrade(t *testing.T) {
	ta := newTestApp(t, wsFiles)
	resp, body := do(t, nil, "GET", ta.srv.URL+"/api/echo", nil)
	if resp.StatusCode != http.StatusUpgradeRequired || !strings.Contains(body, `"error":"upgrade_required"`) ||
		resp.Header.Get("Upgrade") != "websocket" {
		t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, body)
	}
}

// TestWebSocketReadLimit: a message over Config.Realtime.ReadLimit closes
// the connection with 1009; one within it is echoed.
func TestWebSocketReadLimit(t *testing.T) {
	ta := newTestApp(t, wsFiles, host.WithRealtime(host.RealtimeConfig{ReadLimit: 1000}))
	c := dialWS(t, ta.srv.URL, "/api/echo", nil)
	writeWS(t, c, strings.Repeat("a", 1000))
	if got := readWS(t, c); len(got) != 1006 {
		t.Fatalf("1000 bytes: got %d back", len(got))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Write(ctx, websocket.MessageText, []byte(strings.Repeat("a", 1001)))
	if st := closeStatus(t, c); st != websocket.StatusMessageTooBig {
		t.Fatalf("close status %v, want 1009", st)
	}
}

// TestWebSocketOrigin: a browser's handshake from another origin is
// refused 403 in the envelope; the same host and a trusted origin are
// accepted.
func TestWebSocketOrigin(t *testing.T) {
	ta := newTestApp(t, wsFiles, host.WithConfig(func(c *host.Config) { c.TrustedOrigins = []string{"https://app.example"} }))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evil := &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}}
	_, resp, err := websocket.Dial(ctx, wsURL(ta.srv.URL, "/api/echo"), evil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin handshake: %v %v", err, resp)
	}
	for _, o := range []string{"https://app.example", ta.srv.URL} {
		c := dialWS(t, ta.srv.URL, "/api/echo", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {o}}})
		writeWS(t, c, "hi")
		if got := readWS(t, c); got != "echo: hi" {
			t.Fatalf("origin %s: %q", o, got)
		}
	}
}

// TestWebSocketPanic: a panic in the connection's func closes it with
// 1011 and is logged with its stack; the server serves on.
func TestWebSocketPanic(t *testing.T) {
	ta := newTestApp(t, wsFiles)
	c := dialWS(t, ta.srv.URL, "/api/boom", nil)
	writeWS(t, c, "go")
	if st := closeStatus(t, c); st != websocket.StatusInternalError {
		t.Fatalf("close status %v, want 1011", st)
	}
	if !strings.Contains(ta.logs.String(), "assignment to entry in nil map") {
		t.Errorf("the panic is not logged:\n%s", ta.logs)
	}
	c = dialWS(t, ta.srv.URL, "/api/echo", nil)
	writeWS(t, c, "still")
	if got := readWS(t, c); got != "echo: still" {
		t.Fatal(got)
	}
}

// TestWebSocketRoom: three clients in a room each get a message
// broadcast from another handler, in order; a client of another room
// does not.
func TestWebSocketRoom(t *testing.T) {
	ta := newTestApp(t, wsFiles)
	var in []*websocket.Conn
	for range 3 {
		c := dialWS(t, ta.srv.URL, "/api/room?name=lobby", nil)
		if got := readWS(t, c); got != "joined lobby" {
			t.Fatal(got)
		}
		in = append(in, c)
	}
	other := dialWS(t, ta.srv.URL, "/api/room?name=other", nil)
	readWS(t, other)
	for i, m := range []string{"one", "two"} {
		if resp, body := do(t, nil, "GET", ta.srv.URL+"/api/say?room=lobby&msg="+m, nil); resp.StatusCode != 200 {
			t.Fatalf("broadcast %d: %d %s", i, resp.StatusCode, body)
		}
	}
	for i, c := range in {
		if a, b := readWS(t, c), readWS(t, c); a != "one" || b != "two" {
			t.Fatalf("client %d: %q %q", i, a, b)
		}
	}
	do(t, nil, "GET", ta.srv.URL+"/api/say?room=other&msg=private", nil)
	if got := readWS(t, other); got != "private" {
		t.Fatalf("the other room got %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, b, err := in[0].Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lobby got another room's message: %q %v", b, err)
	}
}
