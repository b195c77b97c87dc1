package host_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// TestLifecycleHooks: OnStart hooks run once, in order, at start-up with
// the data directory resolved and before the first request; OnStop hooks
// run once, in reverse order, on Close; a failing OnStart stops the
// start-up; check does not start the application.
func TestLifecycleHooks(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"api/ping.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\nvar ping = func(api *host.API) any { return \"pong\" }\n",
	})
	var events []string
	app := host.New(host.WithRoot(root), host.WithLogOutput(&testutil.Buffer{}, 0))
	app.Symbols(symbols.Symbols)
	app.OnStart(func(a *host.App) error {
		events = append(events, "start1 data="+filepath.Base(a.Config().DataDir))
		return nil
	})
	app.OnStart(func(*host.App) error { events = append(events, "start2"); return nil })
	app.OnStop(func() { events = append(events, "stop1") })
	app.OnStop(func() { events = append(events, "stop2") })

	var out, errOut strings.Builder
	if code := app.Run(context.Background(), []string{"check"}, &out, &errOut); code != 0 || len(events) != 0 {
		t.Fatalf("check: exit %d, hooks %v: %s", code, events, errOut.String())
	}
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Handler(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/ping")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	events = append(events, "request")
	app.Close()
	app.Close()
	want := "start1 data=data,start2,request,stop2,stop1"
	if got := strings.Join(events, ","); got != want {
		t.Errorf("events %s, want %s", got, want)
	}

	failing := host.New(host.WithRoot(root), host.WithLogOutput(&testutil.Buffer{}, 0))
	boom := errors.New("no database")
	failing.OnStart(func(*host.App) error { return boom })
	if _, err := failing.Handler(); !errors.Is(err, boom) {
		t.Errorf("a failing OnStart: %v, want it wrapped", err)
	}
}

// TestServeClosesListenerOnFailedStart: when the application cannot
// start, Serve returns the reason and closes the listener it was given.
func TestServeClosesListenerOnFailedStart(t *testing.T) {
	app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(&testutil.Buffer{}, 0))
	app.OnStart(func(*host.App) error { return errors.New("no database") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := app.Serve(context.Background(), ln); err == nil || !strings.Contains(err.Error(), "no database") {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after a failed Serve: %v; want the listener closed", err)
	}
}

// TestServeDropsSlowHeaders: a client that does not finish its request
// header within ReadHeaderTimeout is disconnected (no Slowloris), not
// before it, while normal requests are served. A timeout under a second
// is set on the connection; a longer one is enforced by the shared clock
// of internal/deadline.
func TestServeDropsSlowHeaders(t *testing.T) {
	for _, timeout := range []time.Duration{200 * time.Millisecond, 1200 * time.Millisecond} {
		t.Run(timeout.String(), func(t *testing.T) {
			t.Parallel()
			addr := servePing(t, func(c *host.Config) { c.ReadHeaderTimeout = timeout })
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			if _, err := io.WriteString(c, "GET /api/ping HTTP/1.1\r\nHost: x\r\n"); err != nil { // no blank line: never finished
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			b, err := io.ReadAll(c)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the connection with an unfinished header is still open after 10s (read %q)", b)
			}
			if d := time.Since(start); d < timeout {
				t.Fatalf("an unfinished header cut after %v, before ReadHeaderTimeout %v", d, timeout)
			}
		})
	}
}

// TestServeIdleTimeout: a kept-alive connection is closed once idle for
// IdleTimeout, and stays open for a request that comes sooner.
func TestServeIdleTimeout(t *testing.T) {
	const idle = 1200 * time.Millisecond
	addr := servePing(t, func(c *host.Config) { c.IdleTimeout = idle })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ask := askOn(t, c)
	const ping = "GET /api/ping HTTP/1.1\r\nHost: x\r\n\r\n"
	ask("ping", ping, http.StatusOK)
	time.Sleep(idle / 2)
	ask("ping within the idle timeout", ping, http.StatusOK) // same connection
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("an idle connection: %v after %v, want EOF", err, time.Since(start))
	}
	// The server's idle time began as it sent the answer, a little before
	// the client had read it.
	if d := time.Since(start); d < idle-100*time.Millisecond {
		t.Fatalf("an idle connection closed after %v, before IdleTimeout %v", d, idle)
	}
}

// TestServeLimitSharedClock: under Serve, a request's arrival comes from
// the shared clock of the connections when the limits are a second or
// more; the execution limit still passes neither early nor much late.
func TestServeLimitSharedClock(t *testing.T) {
	base := "http://" + serveTree(t, map[string]string{
		"api/slow.go": sleeper("slow", "3*time.Second"),
		"api/fair.go": sleeper("fair", "600*time.Millisecond"),
	}, "/api/fair", host.WithMaxExecutionTime(time.Second))
	get := func(path string) (int, time.Duration) {
		t.Helper()
		start := time.Now()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	if code, d := get("/api/slow"); code != http.StatusServiceUnavailable || d < time.Second || d >= 3*time.Second {
		t.Errorf("past the limit: %d after %v, want 503 after 1s and before the handler's 3s", code, d)
	}
	if code, d := get("/api/fair"); code != http.StatusOK {
		t.Errorf("within the limit: %d after %v, want 200", code, d)
	}
}

// servePing serves api/ping.go through Serve with the configuration
// changed by conf, and returns its address once it answers.
func servePing(t *testing.T, conf func(*host.Config)) string {
	t.Helper()
	return serveTree(t, map[string]string{
		"api/ping.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\nvar ping = func(api *host.API) any { return \"pong\" }\n",
	}, "/api/ping", host.WithConfig(conf))
}

// serveTree serves the files through Serve with opts, and returns its
// address once path answers 200.
func serveTree(t *testing.T, files map[string]string, path string, opts ...host.Option) string {
	t.Helper()
	opts = append([]host.Option{host.WithRoot(testutil.WriteTree(t, files)), host.WithLogOutput(&testutil.Buffer{}, 0)}, opts...)
	app := host.New(opts...)
	app.Symbols(symbols.Symbols)
	addr := serveLoopback(t, app).addr
	testutil.WaitFor(t, 10*time.Second, "the server", func() bool {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return addr
}

// serving is an App answering on a loopback listener through Serve.
type serving struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
}

// serveLoopback runs app.Serve on a fresh loopback listener; the test's
// cleanup shuts it down if the test did not.
func serveLoopback(t *testing.T, app *host.App) *serving {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{addr: ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- app.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
		}
	})
	return s
}

// shutdown begins the graceful shutdown, as SIGTERM does.
func (s *serving) shutdown() { s.cancel() }

// wait returns what Serve returned, failing the test if it does not return
// within 30 seconds.
func (s *serving) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
		return nil
	}
}

// TestServerAddr: under Serve, a handler reads the address the server
// listens on from App().Server().Addr().
func TestServerAddr(t *testing.T) {
	addr := serveTree(t, map[string]string{
		"api/addr.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\nvar addr = func(api *host.API) any { return api.App().Server().Addr() }\n",
	}, "/api/addr")
	resp, err := http.Get("http://" + addr + "/api/addr")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if strings.TrimSpace(string(body)) != addr {
		t.Fatalf("App().Server().Addr() in a handler: %s, want %s", body, addr)
	}
}
