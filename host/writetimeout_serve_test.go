package host_test

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// TestWriteTimeoutServe runs TestWriteTimeout's checks on App.Serve, whose
// server sets the write deadline for each request itself: besides them, a
// kept-alive connection idle past the timeout still gets its next answer,
// and the 400 of a malformed request; a large static file read slowly,
// longer than the timeout, arrives whole.
func TestWriteTimeoutServe(t *testing.T) {
	const timeout = 300 * time.Millisecond
	files := writeTimeoutFiles()
	files["api/w/quick.go"] = handlerFile("quick", `return map[string]any{"quick": true}`)
	files["public/big.bin"] = strings.Repeat("z", 8<<20)
	root := testutil.WriteTree(t, files)
	logs := &testutil.Buffer{}
	app := host.New(host.WithRoot(root), host.WithLogOutput(logs, slog.LevelDebug),
		host.WithConfig(func(c *host.Config) { c.WriteTimeout = timeout }))
	app.Symbols(symbols.Symbols)
	s := serveLoopback(t, app)
	base := "http://" + s.addr
	checkWriteTimeout(t, base, logs)

	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ask := askOn(t, c)
	ask("first request", "GET /api/w/quick HTTP/1.1\r\nHost: t\r\n\r\n", 200)
	time.Sleep(2 * timeout)
	ask("after an idle spell", "GET /api/w/quick HTTP/1.1\r\nHost: t\r\n\r\n", 200)
	time.Sleep(2 * timeout)
	ask("malformed, after an idle spell", "GET /api/w/quick HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n", 400)

	big, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	big.(*net.TCPConn).SetReadBuffer(64 << 10)
	if _, err := io.WriteString(big, "GET /big.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := http.ReadResponse(bufio.NewReader(big), nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	n := 0
	for {
		k, err := resp.Body.Read(buf)
		n += k
		if err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != 200 || n != 8<<20 {
		t.Fatalf("a large file read slowly (%s, write timeout %s): %d, %d of %d bytes", took, timeout, resp.StatusCode, n, 8<<20)
	}
}

// askOn returns a func that sends a raw request on the kept-alive
// connection c and fails unless its answer has the status want.
func askOn(t *testing.T, c net.Conn) func(what, req string, want int) {
	br := bufio.NewReader(c)
	return func(what, req string, want int) {
		t.Helper()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s: %d, want %d", what, resp.StatusCode, want)
		}
	}
}
