package jstask

// The tests run the NATS server, the workers and some dispatchers as
// processes of their own: this test binary started again with
// JSTASK_ROLE set to "server", "worker" or "dispatcher" (see TestMain).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/testutil"
)

func TestMain(m *testing.M) {
	if role := os.Getenv("JSTASK_ROLE"); role != "" {
		if err := runRole(role); err != nil {
			fmt.Fprintln(os.Stderr, "role", role+":", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// envConfig is the Config of the tests, as the environment adjusts it.
func envConfig() Config {
	c := Config{
		Prefix:        os.Getenv("JSTASK_PREFIX"),
		AckWait:       time.Second,
		MaxDeliver:    3,
		ResultAckWait: time.Second,
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if v, err := strconv.Atoi(os.Getenv("JSTASK_MAXDELIVER")); err == nil {
		c.MaxDeliver = v
	}
	c.ResultBatch = envInt("JSTASK_RESULT_BATCH", 0)
	return c
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// runRole runs this process as a server, a worker or a dispatcher until
// its standard input closes (or it is killed).
func runRole(role string) error {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if role == "server" {
		srv, err := natsrv.Start(natsrv.Config{DataDir: os.Getenv("JSTASK_DIR"), Port: envInt("JSTASK_PORT", 0)})
		if err != nil {
			return err
		}
		fmt.Println("ready", srv.URL())
		<-ctx.Done()
		srv.Shutdown()
		return nil
	}
	conn, err := natsrv.Connect(ctx, os.Getenv("JSTASK_URL"), natsrv.ConnectOptions{Name: role})
	if err != nil {
		return err
	}
	defer conn.Close()
	switch role {
	case "worker":
		return runWorker(ctx, conn)
	case "dispatcher":
		return runDispatcher(ctx, conn)
	}
	return fmt.Errorf("unknown role %q", role)
}

func runWorker(ctx context.Context, conn *natsrv.Conn) error {
	w, err := NewWorker(ctx, conn.JS, WorkerConfig{
		Config:      envConfig(),
		Concurrency: envInt("JSTASK_CONC", 1),
		Grace:       time.Duration(envInt("JSTASK_GRACE_MS", 5000)) * time.Millisecond,
		PollWait:    500 * time.Millisecond,
	})
	if err != nil {
		return err
	}
	fmt.Println("ready")
	return w.Run(ctx, testRunner(os.Getenv("JSTASK_MARK")))
}

// testRunner runs the test tasks. Each run of a task leaves a file
// <mark>/<id>.<delivery> behind when it starts.
func testRunner(mark string) Runner {
	var running, peak atomic.Int64
	return func(ctx context.Context, t Task, n int) (json.RawMessage, error) {
		if mark != "" {
			_ = os.WriteFile(filepath.Join(mark, fmt.Sprintf("%d.%d", t.ID, n)), nil, 0o644)
		}
		cur := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); cur > p && !peak.CompareAndSwap(p, cur); p = peak.Load() {
		}
		var args []int
		_ = json.Unmarshal(t.Args, &args)
		switch t.Handler {
		case "/task/echo":
			return json.Marshal(map[string]any{"args": t.Args, "deliveries": n, "request_id": t.RequestID, "trace": t.TraceContext})
		case "/task/sleep": // [ms on the first delivery, ms on later ones]
			d := args[0]
			if n > 1 && len(args) > 1 {
				d = args[1]
			}
			select {
			case <-time.After(time.Duration(d) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return json.Marshal(map[string]any{"deliveries": n, "pid": os.Getpid(), "peak": peak.Load()})
		case "/task/fail":
			return nil, errors.New("boom")
		case "/task/flaky": // fails on its first run
			if n == 1 {
				return nil, errors.New("flaky")
			}
			return json.Marshal(map[string]any{"deliveries": n})
		case "/task/panic":
			panic("kaboom")
		case "/task/crash":
			os.Exit(3)
		case "/task/stuck": // ignores its context
			time.Sleep(time.Hour)
		case "/task/big":
			return json.Marshal(strings.Repeat("x", 9<<20))
		}
		return nil, &TaskError{Kind: "load", Msg: "no such task " + t.Handler}
	}
}

// runDispatcher opens a client of instance JSTASK_INSTANCE, prints
// "finish <id> <result or kind>" for every result, dispatches
// JSTASK_DISPATCH sleep tasks and prints "dispatched <id>" for each.
func runDispatcher(ctx context.Context, conn *natsrv.Conn) error {
	var out sync.Mutex
	finish := func(id int64, _ string, result json.RawMessage, err error) {
		out.Lock()
		defer out.Unlock()
		if err != nil {
			fmt.Printf("finish %d ERR %v\n", id, err)
			return
		}
		fmt.Printf("finish %d %s\n", id, result)
	}
	c, err := Open(ctx, conn.JS, envConfig(), os.Getenv("JSTASK_INSTANCE"), finish)
	if err != nil {
		return err
	}
	defer c.Close()
	for range envInt("JSTASK_DISPATCH", 0) {
		id, err := c.Dispatch(ctx, Task{Handler: "/task/sleep", Args: json.RawMessage(`[300]`)})
		if err != nil {
			return err
		}
		out.Lock()
		fmt.Println("dispatched", id)
		out.Unlock()
	}
	fmt.Println("ready")
	<-ctx.Done()
	return nil
}

// proc is a process of this test binary in a role.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	out    *testutil.Buffer // every line of its standard output
	stderr *testutil.Buffer
	exited chan struct{}
}

// startProc starts a process in role with the extra environment env and
// waits for its "ready" line; the test's end kills it.
func startProc(t *testing.T, role string, env ...string) *proc {
	t.Helper()
	p := launch(t, role, env...)
	p.waitLine(t, "ready", 15*time.Second)
	return p
}

// launch starts a process in role without waiting for it.
func launch(t *testing.T, role string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "JSTASK_ROLE="+role), env...)
	p := &proc{cmd: cmd, lines: make(chan string, 4096), out: &testutil.Buffer{}, stderr: &testutil.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			_, _ = p.out.Write([]byte(sc.Text() + "\n"))
			p.lines <- sc.Text()
		}
		_ = cmd.Wait()
		close(p.lines)
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if strings.Contains(p.stderr.String(), "DATA RACE") {
			t.Errorf("the %s process found a data race", role)
		}
		if t.Failed() {
			t.Logf("%s %d stderr:\n%s", role, cmd.Process.Pid, p.stderr.String())
		}
	})
	return p
}

// waitLine returns the next line starting with prefix.
func (p *proc) waitLine(t *testing.T, prefix string, within time.Duration) string {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("%s exited before printing %q; stderr:\n%s", p.cmd.Args[0], prefix, p.stderr.String())
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			t.Fatalf("no line %q within %v; stderr:\n%s", prefix, within, p.stderr.String())
		}
	}
}

// outLines returns the lines of its output so far that start with prefix.
func (p *proc) outLines(prefix string) []string {
	var got []string
	for l := range strings.Lines(p.out.String()) {
		if strings.HasPrefix(l, prefix) {
			got = append(got, strings.TrimSuffix(l, "\n"))
		}
	}
	return got
}

// kill sends SIGKILL and waits for the process to end.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// waitExit waits for the process to end by itself.
func (p *proc) waitExit(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(within):
		t.Fatalf("process %d did not exit within %v", p.cmd.Process.Pid, within)
	}
}

// stop closes the process's standard input and waits for it to end.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.stdin.Close()
	p.waitExit(t, 20*time.Second)
}
