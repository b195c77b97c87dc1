package main

import (
	"bufio"
	"net"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// TestStoppingChildAnswersFreshConnection: a supervised child told to
// stop answers a request that arrives on a connection it accepted before
// it stopped accepting, instead of closing the connection unanswered
// (net/http's Shutdown drops a request it reads while shutting down: the
// client sees EOF on a fresh connection and does not retry, the rare
// failed request at a switch of tiered serve).
func TestStoppingChildAnswersFreshConnection(t *testing.T) {
	app := newTierApp(t)
	addr := testutil.FreeAddr(t)
	base := "http://" + addr
	cmd := exec.Command(binary, "serve", "--addr", addr, "--tiered=false")
	cmd.Dir, cmd.Stderr = app, &testutil.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	testutil.WaitFor(t, 20*time.Second, "the server", func() bool {
		code, _, _ := fetchQuiet(base + "/api/hello?name=Ada")
		return code == 200
	})
	// A fresh connection with half a request: the child accepts it and
	// waits for the rest of the header.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET /api/hello?name=Ada HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "the child to serve on", func() bool {
		code, _, _ := fetchQuiet(base + "/api/hello?name=Ada")
		return code == 200 // and has had the time to accept c
	})
	cmd.Process.Signal(syscall.SIGTERM)
	// The child stops accepting: a probe connection is no longer answered.
	testutil.WaitFor(t, 10*time.Second, "the child to stop accepting", func() bool {
		p, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return true
		}
		defer p.Close()
		p.SetDeadline(time.Now().Add(100 * time.Millisecond))
		p.Write([]byte("GET /api/hello?name=Ada HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
		_, err = bufio.NewReader(p).ReadByte()
		return err != nil
	})
	if _, err := c.Write([]byte("\r\n")); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the request on the connection accepted before the stop: %v (want an answer)", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("answer %s, close %v; want 200 with Connection: close", resp.Status, resp.Close)
	}
}

// fetchQuiet is a GET that reports a failure as status 0.
func fetchQuiet(url string) (int, http.Header, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, nil, err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}
