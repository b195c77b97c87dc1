package deadline

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// coarse records every future deadline and ticks often, so that the
// tests exercise the watcher with short deadlines.
var coarse = Options{Tick: 10 * time.Millisecond, Precise: -1}

// listen returns a loopback listener wrapped with o, closed when the test
// ends, and its address.
func listen(tb testing.TB, o Options) (*listener, string) {
	tb.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ln := Listen(raw, o).(*listener)
	tb.Cleanup(func() { ln.Close() })
	return ln, raw.Addr().String()
}

// connect dials ln and returns the accepted side and the client side.
func connect(tb testing.TB, ln net.Listener, addr string) (net.Conn, net.Conn) {
	tb.Helper()
	client, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := ln.Accept()
	if err != nil {
		client.Close()
		tb.Fatal(err)
	}
	return c, client
}

// pair returns the server side of a connection accepted by a listener
// wrapped with o, and the client side.
func pair(t *testing.T, o Options) (*Conn, net.Conn) {
	t.Helper()
	ln, addr := listen(t, o)
	c, client := connect(t, ln, addr)
	t.Cleanup(func() { client.Close() })
	t.Cleanup(func() { c.Close() })
	dc, ok := c.(*Conn)
	if !ok {
		t.Fatalf("accepted %T, want *Conn", c)
	}
	return dc, client
}

// state returns whether s is set on the connection and what it records.
func (c *Conn) state(s *side) (applied bool, at int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.applied.Load(), s.at.Load()
}

// ticked waits until a watcher has ticked: the shared clock moved.
func ticked(t *testing.T) {
	t.Helper()
	d0, _ := Now()
	testutil.WaitFor(t, 5*time.Second, "a watcher's tick", func() bool { d, _ := Now(); return d > d0 })
}

// blockedIn reports whether a goroutine whose stack has fn waits on the
// network poller: a Read or Write that blocks.
func blockedIn(fn string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "[IO wait") && strings.Contains(g, fn) {
			return true
		}
	}
	return false
}

// timedOut fails unless err is a deadline's.
func timedOut(t *testing.T, err error) {
	t.Helper()
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v, want a deadline exceeded", err)
	}
}

func TestReadDeadlinePasses(t *testing.T) {
	c, _ := pair(t, coarse)
	start := time.Now()
	if err := c.SetReadDeadline(start.Add(150 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if applied, at := c.state(&c.read); applied || at == 0 {
		t.Fatal("a far deadline was set on the connection, not recorded")
	}
	_, err := c.Read(make([]byte, 1))
	timedOut(t, err)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("the deadline took effect after %v, before it passed", d)
	}
	// Past its deadline, the connection stays expired, as net.Conn's does.
	_, err = c.Read(make([]byte, 1))
	timedOut(t, err)
}

func TestLaterDeadlineReplaces(t *testing.T) {
	c, client := pair(t, coarse)
	start := time.Now()
	c.SetReadDeadline(start.Add(80 * time.Millisecond))
	ticked(t) // the watcher has looked at the near deadline
	c.SetReadDeadline(start.Add(time.Hour))
	time.AfterFunc(250*time.Millisecond, func() { client.Write([]byte("x")) })
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatalf("read past the replaced deadline: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	timedOut(t, err)
}

func TestClearedDeadline(t *testing.T) {
	c, client := pair(t, coarse)
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	c.SetReadDeadline(time.Time{})
	time.AfterFunc(200*time.Millisecond, func() { client.Write([]byte("x")) })
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatalf("read with the deadline cleared: %v", err)
	}
}

// After the watcher has expired a deadline, a new deadline (far or
// cleared) lifts it from the connection.
func TestNewDeadlineAfterExpiry(t *testing.T) {
	for _, next := range []time.Duration{0, time.Hour} {
		c, client := pair(t, coarse)
		c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		timedOut(t, err)
		if applied, _ := c.state(&c.read); !applied {
			t.Fatal("expired deadline not marked as set on the connection")
		}
		var dl time.Time
		if next > 0 {
			dl = time.Now().Add(next)
		}
		c.SetReadDeadline(dl)
		client.Write([]byte("x"))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatalf("next %v: read after a new deadline: %v", next, err)
		}
	}
}

// A past deadline wakes a pending read at once (net/http aborts its
// background read so), and a near one is the connection's own.
func TestPastAndNearDeadlines(t *testing.T) {
	c, _ := pair(t, Options{})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		errc <- err
	}()
	testutil.WaitFor(t, 5*time.Second, "the read to block", func() bool { return blockedIn("deadline.TestPastAndNearDeadlines.func1") })
	c.SetReadDeadline(time.Unix(1, 0))
	select {
	case err := <-errc:
		timedOut(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("a past deadline did not wake the pending read")
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	if applied, at := c.state(&c.read); !applied || at != 0 {
		t.Fatal("a near deadline was recorded, not set on the connection")
	}
	_, err := c.Read(make([]byte, 1))
	timedOut(t, err)
	c.SetReadDeadline(time.Now().Add(time.Hour)) // recorded: clears the near one
	if applied, at := c.state(&c.read); applied || at == 0 {
		t.Fatal("a far deadline did not replace the near one")
	}
}

func TestWriteDeadlinePasses(t *testing.T) {
	c, _ := pair(t, coarse) // the client never reads
	c.SetWriteBuffer(4096)
	start := time.Now()
	c.SetWriteDeadline(start.Add(150 * time.Millisecond))
	buf := make([]byte, 64<<10)
	var err error
	for err == nil && time.Since(start) < 10*time.Second {
		_, err = c.Write(buf)
	}
	timedOut(t, err)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("the write deadline took effect after %v, before it passed", d)
	}
}

func TestSetDeadlineBothSides(t *testing.T) {
	c, _ := pair(t, coarse)
	c.SetDeadline(time.Now().Add(time.Hour))
	if _, r := c.state(&c.read); r == 0 {
		t.Fatal("SetDeadline did not record the read side")
	}
	if _, w := c.state(&c.write); w == 0 {
		t.Fatal("SetDeadline did not record the write side")
	}
	c.Close()
	if err := c.SetDeadline(time.Now().Add(time.Hour)); err == nil {
		t.Fatal("SetDeadline on a closed connection: no error")
	}
}

// The watcher's goroutine ends when no connection is left and starts
// again with the next one.
func TestWatcherStops(t *testing.T) {
	ln, addr := listen(t, coarse)
	watching := func() bool {
		ln.w.mu.Lock()
		defer ln.w.mu.Unlock()
		return ln.w.running
	}
	for round := range 2 {
		c, client := connect(t, ln, addr)
		if !watching() {
			t.Fatalf("round %d: no watcher with a connection open", round)
		}
		// The shared clock runs, within a tick of the monotonic clock.
		d0, ok := Now()
		if !ok || time.Since(base)-d0 > 5*time.Second {
			t.Fatalf("round %d: Now() = %v, %v with a watcher running, %v since Base", round, d0, ok, time.Since(base))
		}
		testutil.WaitFor(t, 5*time.Second, "the shared clock to tick", func() bool { d, _ := Now(); return d > d0 })
		if d1, _ := Now(); d1 <= d0 || d1 > time.Since(base) {
			t.Fatalf("round %d: the shared clock went from %v to %v, %v since Base", round, d0, d1, time.Since(base))
		}
		c.Close()
		c.Close() // a second Close changes nothing
		client.Close()
		if !testutil.Poll(5*time.Second, func() bool { return !watching() }) {
			t.Fatalf("round %d: the watcher still runs with no connection", round)
		}
	}
	if !testutil.Poll(5*time.Second, func() bool { return running.Load() == 0 }) { // other tests' watchers end too
		t.Fatal("watchers still run with no connection")
	}
	if _, ok := Now(); ok {
		t.Fatal("Now() is ok with no watcher running")
	}
}

// Connections other than TCP are not wrapped.
func TestNotTCP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	raw, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln := Listen(raw, Options{})
	defer ln.Close()
	go func() {
		if c, err := net.Dial("unix", path); err == nil {
			defer c.Close()
			io.Copy(io.Discard, c)
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*net.UnixConn); !ok {
		t.Fatalf("accepted %T, want *net.UnixConn", c)
	}
}

// Many connections setting and clearing deadlines while the watcher
// expires some: for the race detector, and every read ends as its
// deadline says.
func TestConcurrentDeadlines(t *testing.T) {
	ln, addr := listen(t, Options{Tick: time.Millisecond, Precise: -1})
	var wg sync.WaitGroup
	for range 8 {
		c, client := connect(t, ln, addr)
		wg.Go(func() {
			defer client.Close()
			defer c.Close()
			for i := range 50 {
				c.SetWriteDeadline(time.Now().Add(time.Hour))
				c.SetReadDeadline(time.Now().Add(time.Duration(i%3) * time.Millisecond))
				if i%3 == 0 {
					c.SetReadDeadline(time.Time{})
					client.Write([]byte("x"))
					if _, err := c.Read(make([]byte, 1)); err != nil {
						t.Errorf("read with no deadline: %v", err)
						return
					}
					continue
				}
				if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("read past its deadline: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// Near, far and no deadlines set on one side from several goroutines
// while the watcher expires some: whatever set comes last decides, and
// nothing the others applied is left on the connection.
func TestMixedSetters(t *testing.T) {
	c, client := pair(t, Options{Tick: time.Millisecond, Precise: 20 * time.Millisecond})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				switch (g + i) % 4 {
				case 0:
					c.SetReadDeadline(time.Now().Add(time.Millisecond)) // near
				case 1:
					c.SetReadDeadline(time.Now().Add(25 * time.Millisecond)) // far, soon due
				case 2:
					c.SetReadDeadline(time.Time{})
				default:
					c.SetReadDeadline(time.Now().Add(-time.Second)) // past
				}
			}
		})
	}
	wg.Wait()
	c.SetReadDeadline(time.Now().Add(time.Hour))
	if applied, at := c.state(&c.read); applied || at == 0 {
		t.Fatalf("after a far deadline: applied %v, recorded %d", applied, at)
	}
	time.AfterFunc(50*time.Millisecond, func() { client.Write([]byte("x")) })
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatalf("a read under a far deadline: %v", err)
	}
}

// An http.Server over the listener: kept-alive requests, the header
// timeout against a client that stops halfway, the idle timeout, and a
// file sent through the wrapped connection.
func TestHTTPServer(t *testing.T) {
	dir := t.TempDir()
	body := strings.Repeat("zealgo ", 40000)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, addr := listen(t, coarse)
	srv := &http.Server{
		Handler:           http.FileServer(http.Dir(dir)),
		ReadHeaderTimeout: 200 * time.Millisecond,
		IdleTimeout:       300 * time.Millisecond,
		WriteTimeout:      5 * time.Second,
	}
	go srv.Serve(ln)
	defer srv.Close()

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for i := range 20 {
		if i == 10 {
			time.Sleep(150 * time.Millisecond) // idle, but less than IdleTimeout
		}
		io.WriteString(conn, "GET /f.txt HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(b) != body {
			t.Fatalf("request %d: %d, %d bytes", i, res.StatusCode, len(b))
		}
	}
	start := time.Now()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want EOF", err)
	}
	// The server's idle time began as it sent the response, a little
	// before the client had read it.
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("idle connection closed after %v, before IdleTimeout", d)
	}

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	start = time.Now()
	io.WriteString(slow, "GET /f.txt HTTP/1.1\r\nHo")
	b, _ := io.ReadAll(slow) // net/http answers 400 and closes
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("half a header cut after %v, before ReadHeaderTimeout", d)
	}
	if !strings.HasPrefix(string(b), "HTTP/1.1 400 ") {
		t.Fatalf("half a header answered %q", b)
	}
}

// BenchmarkRequestDeadlines sets the deadlines net/http sets for each
// request on a kept-alive connection with ReadHeaderTimeout, WriteTimeout
// and IdleTimeout: on the TCP connection itself ("tcp", the reference)
// and through a Conn ("coarse").
func BenchmarkRequestDeadlines(b *testing.B) {
	ln, addr := listen(b, Options{})
	c, client := connect(b, ln, addr)
	defer client.Close()
	defer c.Close()
	past := time.Unix(1, 0)
	request := func(c net.Conn) {
		c.SetReadDeadline(time.Now().Add(10 * time.Second)) // the header
		c.SetReadDeadline(time.Time{})                      // header read
		c.SetWriteDeadline(time.Now().Add(time.Minute))     // the response
		c.SetReadDeadline(past)                             // abortPendingRead
		c.SetReadDeadline(time.Time{})
		c.SetReadDeadline(time.Now().Add(2 * time.Minute)) // idle
	}
	for _, tc := range []struct {
		name string
		c    net.Conn
	}{{"tcp", c.(*Conn).NetConn()}, {"coarse", c}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				request(tc.c)
			}
		})
	}
}

// TestStaleReadings: a reading the clock replaces more than DefaultTick
// later is recorded with how far past the tick it stood; one replaced on
// time is not; the ring keeps the latest 64.
func TestStaleReadings(t *testing.T) {
	var c sharedClock
	tick := int64(DefaultTick)
	c.advance(10 * tick)
	c.advance(11 * tick) // on time
	c.advance(11*tick + tick + 7)
	c.advance(5 * tick) // behind: another watcher moved it further
	if got := c.stale.find(11 * tick); got != 7 {
		t.Fatalf("the reading that stood 7ns past a tick: %d, want 7", got)
	}
	if got := c.stale.find(10 * tick); got != 0 {
		t.Fatalf("the reading replaced on time: %d, want 0", got)
	}
	if got := c.Load(); got != 12*tick+7 {
		t.Fatalf("the clock: %d, want %d", got, 12*tick+7)
	}
	now := c.Load()
	for range 64 {
		now += 2 * tick
		c.advance(now)
	}
	if got := c.stale.find(11 * tick); got != 0 {
		t.Fatalf("after 64 stale readings, the first is still kept: %d", got)
	}
	if got := c.stale.find(now - 2*tick); got != tick {
		t.Fatalf("the latest stale reading: %d, want %d", got, tick)
	}
	if got := Stale(-time.Hour); got != 0 {
		t.Fatalf("Stale of a reading the clock never had: %v", got)
	}
}
