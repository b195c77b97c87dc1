//go:build unix

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// The test binary plays the supervised program: roleEnv=child makes it a
// small HTTP server on the inherited listener, roleEnv=supervisor a
// supervisor of such children on the address in addrEnv.
const (
	roleEnv = "SUPERVISOR_TEST_ROLE"
	failEnv = "SUPERVISOR_TEST_FAIL" // 1: the child exits 7 before it is ready
	addrEnv = "SUPERVISOR_TEST_ADDR"
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "child":
		os.Exit(testChild())
	case "supervisor":
		os.Exit(testSupervisor())
	}
	os.Exit(m.Run())
}

// testChild serves /pid, /exit (dies), /replace (asks for a successor) and
// /slow (answers once the child is told to stop, or after 10s; /slowing
// counts those begun) until SIGTERM or the supervisor is gone.
func testChild() int {
	if os.Getenv(failEnv) == "1" {
		fmt.Fprintln(os.Stderr, "child: failing at start")
		return 7
	}
	c, err := Current()
	if err != nil || c == nil {
		fmt.Fprintln(os.Stderr, "child: not supervised:", err)
		return 9
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	pid := strconv.Itoa(os.Getpid())
	mux := http.NewServeMux()
	mux.HandleFunc("/pid", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, pid) })
	mux.HandleFunc("/exit", func(w http.ResponseWriter, r *http.Request) { os.Exit(3) })
	mux.HandleFunc("/replace", func(w http.ResponseWriter, r *http.Request) {
		c.Replace("a test\nasks")
		io.WriteString(w, pid)
	})
	mux.HandleFunc("/note", func(w http.ResponseWriter, r *http.Request) {
		c.Note("build api/x.go")
		io.WriteString(w, pid)
	})
	var slowing atomic.Int64
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		slowing.Add(1)
		select {
		case <-ctx.Done(): // in flight when the child drains
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, pid)
	})
	mux.HandleFunc("/slowing", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, slowing.Load()) })
	mux.HandleFunc("/marker", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, os.Getenv(envMarker)) })
	srv := &http.Server{Handler: mux}
	go srv.Serve(c.Listener())
	for _, x := range c.Extra() {
		go srv.Serve(x)
	}
	c.Ready()
	select {
	case <-ctx.Done():
	case <-c.Done():
		fmt.Fprintln(os.Stderr, "child: the supervisor is gone")
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return 1
	}
	return 0
}

func testSupervisor() int {
	ln, err := net.Listen("tcp", os.Getenv(addrEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = Run(context.Background(), Options{Listener: ln, Command: func() *exec.Cmd { return childCommand(false) }})
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// childCommand runs this test binary as a child.
func childCommand(fail bool) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=child")
	if fail {
		cmd.Env = append(cmd.Env, failEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	return cmd
}

// running is a supervisor run by a test, on a loopback port.
type running struct {
	base string
	log  *testutil.Buffer
	stop context.CancelFunc
	done chan error
}

func startRun(t *testing.T, o Options) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &running{base: "http://" + ln.Addr().String(), log: &testutil.Buffer{}, done: make(chan error, 1)}
	o.Listener = ln
	o.Logger = slog.New(slog.NewTextHandler(r.log, nil))
	if o.Command == nil {
		o.Command = func() *exec.Cmd { return childCommand(false) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() { r.done <- Run(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			t.Error("the supervisor did not stop")
		}
		if t.Failed() {
			t.Logf("supervisor log:\n%s", r.log)
		}
	})
	return r
}

var client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func get(url string) (string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// pid waits until the server answers /pid and returns the child's pid.
func (r *running) pid(t *testing.T, not int) int {
	t.Helper()
	var pid int
	testutil.WaitFor(t, 15*time.Second, "a child other than "+strconv.Itoa(not)+" to answer", func() bool {
		s, err := get(r.base + "/pid")
		pid, _ = strconv.Atoi(s)
		return err == nil && pid != 0 && pid != not
	})
	return pid
}

// gone reports whether pid has exited (a reaped child of this process).
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// TestCrashRestartsOnSameSocket: a child that dies is replaced at once on
// the same socket: a client loop across the crash is never refused; a
// stopped supervisor stops its child gracefully (SIGTERM, exit 0).
func TestCrashRestartsOnSameSocket(t *testing.T) {
	r := startRun(t, Options{})
	first := r.pid(t, 0)
	if m, err := get(r.base + "/marker"); err != nil || m != "" {
		t.Errorf("the child still sees the marker: %q %v", m, err)
	}
	var refused, ok atomic.Int64
	loopDone := make(chan struct{})
	stopLoop := make(chan struct{})
	go func() {
		defer close(loopDone)
		for {
			select {
			case <-stopLoop:
				return
			default:
			}
			_, err := get(r.base + "/pid")
			switch {
			case errors.Is(err, syscall.ECONNREFUSED):
				refused.Add(1)
			case err == nil:
				ok.Add(1)
			}
		}
	}()
	testutil.WaitFor(t, 10*time.Second, "the client loop's first answer", func() bool { return ok.Load() > 0 })
	if _, err := get(r.base + "/exit"); err == nil {
		t.Fatal("/exit answered")
	}
	second := r.pid(t, first)
	n := ok.Load()
	testutil.WaitFor(t, 10*time.Second, "the client loop's answers after the crash", func() bool { return ok.Load() > n })
	close(stopLoop)
	<-loopDone
	if refused.Load() != 0 || ok.Load() == 0 {
		t.Errorf("across the crash: %d refused, %d answered", refused.Load(), ok.Load())
	}
	if !strings.Contains(r.log.String(), fmt.Sprintf(`msg="supervisor: server process died" pid=%d status="exit status 3"`, first)) {
		t.Errorf("the crash is not logged:\n%s", r.log)
	}
	r.stop()
	if err := <-r.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	r.done <- nil // for the cleanup
	if !gone(second) {
		t.Errorf("child %d still runs after Run returned", second)
	}
	if !strings.Contains(r.log.String(), fmt.Sprintf(`msg="supervisor: server process stopped" pid=%d status="exit status 0"`, second)) {
		t.Errorf("the child did not stop gracefully:\n%s", r.log)
	}
}

// TestReplaceDrainsOldChild: a child asks to be replaced; its successor
// takes the socket, and the old child finishes its request in flight
// before it exits.
func TestReplaceDrainsOldChild(t *testing.T) {
	r := startRun(t, Options{})
	first := r.pid(t, 0)
	slow := make(chan string, 1)
	go func() {
		s, err := get(r.base + "/slow")
		if err != nil {
			s = err.Error()
		}
		slow <- s
	}()
	testutil.WaitFor(t, 10*time.Second, "the slow request in the first child", func() bool {
		s, err := get(r.base + "/slowing")
		return err == nil && s == "1"
	})
	if s, err := get(r.base + "/replace"); err != nil || s != strconv.Itoa(first) {
		t.Fatalf("/replace: %q %v", s, err)
	}
	second := r.pid(t, first)
	if got := <-slow; got != strconv.Itoa(first) {
		t.Fatalf("the request in flight got %q, want the answer of %d", got, first)
	}
	testutil.WaitFor(t, 10*time.Second, "the old child to exit", func() bool { return gone(first) })
	if s, _ := get(r.base + "/pid"); s != strconv.Itoa(second) {
		t.Errorf("after the replacement /pid is %q, want %d", s, second)
	}
	if !strings.Contains(r.log.String(), `reason="a test asks"`) ||
		!strings.Contains(r.log.String(), fmt.Sprintf(`msg="supervisor: server process stopped" pid=%d status="exit status 0"`, first)) {
		t.Errorf("log:\n%s", r.log)
	}
}

// TestCrashLoopBacksOff: children that die before they are ready are
// restarted after delays that double up to the cap; the next healthy one
// serves again.
func TestCrashLoopBacksOff(t *testing.T) {
	var mu sync.Mutex
	var starts []time.Time
	failing := true
	// StableAfter of a nanosecond: the first child, once ready, has run
	// well, so its death is a crash, not a loop.
	o := Options{MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, StableAfter: time.Nanosecond,
		Command: func() *exec.Cmd {
			mu.Lock()
			defer mu.Unlock()
			starts = append(starts, time.Now())
			return childCommand(len(starts) > 1 && failing)
		}}
	r := startRun(t, o)
	first := r.pid(t, 0)
	// It answers before the supervisor may have read its ready report.
	ready := fmt.Sprintf(`msg="supervisor: server process ready" pid=%d `, first)
	testutil.WaitFor(t, 15*time.Second, "the first child's ready report", func() bool { return strings.Contains(r.log.String(), ready) })
	get(r.base + "/exit")
	testutil.WaitFor(t, 15*time.Second, "six starts", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(starts) >= 6
	})
	mu.Lock()
	failing = false
	got := append([]time.Time(nil), starts...)
	mu.Unlock()
	// Start 2 follows the crash at once; 3, 4, 5, 6 wait 50, 100, 200, 200ms.
	for i, want := range []time.Duration{50, 100, 200, 200} {
		if gap := got[i+2].Sub(got[i+1]); gap < want*time.Millisecond {
			t.Errorf("start %d came %v after start %d, want at least %dms", i+3, gap, i+2, want)
		}
	}
	for _, d := range []string{"delay=50ms deaths_in_a_row=1", "delay=100ms deaths_in_a_row=2", "delay=200ms deaths_in_a_row=3", "delay=200ms deaths_in_a_row=4"} {
		if !strings.Contains(r.log.String(), d) {
			t.Errorf("log lacks %q:\n%s", d, r.log)
		}
	}
	r.pid(t, first)
}

// TestFirstChildFails: a program that cannot start makes Run return its
// exit status instead of restarting it forever.
func TestFirstChildFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), Options{Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Command: func() *exec.Cmd { return childCommand(true) }})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 7 {
		t.Fatalf("Run: %v, want an *ExitError with code 7", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the listener is still open")
	}
}

// TestChildStopsWhenSupervisorDies: a supervisor killed with SIGKILL
// leaves no child behind: the child sees its control pipe end and stops.
func TestChildStopsWhenSupervisorDies(t *testing.T) {
	addr := testutil.FreeAddr(t)
	logs := &testutil.Buffer{}
	sup := exec.Command(os.Args[0], "-test.run=^$")
	sup.Env = append(os.Environ(), roleEnv+"=supervisor", addrEnv+"="+addr)
	sup.Stderr = logs
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { sup.Wait(); close(waited) }()
	r := &running{base: "http://" + addr}
	child := r.pid(t, 0)
	t.Cleanup(func() {
		syscall.Kill(sup.Process.Pid, syscall.SIGKILL)
		if !exited(child) {
			syscall.Kill(child, syscall.SIGKILL)
		}
	})
	if err := syscall.Kill(sup.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the orphaned child to exit", func() bool { return exited(child) })
	select {
	case <-waited: // the child closed its end of the log pipe too
	case <-time.After(10 * time.Second):
		t.Fatal("the log pipe stayed open")
	}
	if !strings.Contains(logs.String(), "child: the supervisor is gone") {
		t.Errorf("log:\n%s", logs)
	}
}

// exited reports whether pid is gone or a zombie (an orphan whose reaper
// has not reaped it yet).
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return gone(pid)
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(after, "Z")
}

// TestSwitchAndNote: a child's note reaches OnNote; a switch starts a new
// child of Command on the same socket, which takes over while the old one
// stops, and a switch while one is starting is followed by one more.
func TestSwitchAndNote(t *testing.T) {
	notes, switches := make(chan string, 4), make(chan string)
	r := startRun(t, Options{Switch: switches, OnNote: func(n string) { notes <- n }})
	first := r.pid(t, 0)
	if _, err := get(r.base + "/note"); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-notes:
		if n != "build api/x.go" {
			t.Errorf("note %q", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no note")
	}
	switches <- "a new build"
	second := r.pid(t, first)
	testutil.WaitFor(t, 15*time.Second, "the first child to stop", func() bool { return gone(first) })
	switches <- "build 2"
	switches <- "build 3" // while build 2's child starts: one more follows
	testutil.WaitFor(t, 15*time.Second, "a fourth child ready", func() bool {
		return strings.Count(r.log.String(), "server process ready") == 4
	})
	r.pid(t, second)
	if !strings.Contains(r.log.String(), "switching to a new server process") {
		t.Errorf("the log:\n%s", r.log)
	}
}

// TestExtraListenersAcrossSwitch: a socket of Options.Extra (a metrics
// listener) is served by each child, the one that stops and its
// successor, and stays open across the switch.
func TestExtraListenersAcrossSwitch(t *testing.T) {
	extra, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	switches := make(chan string)
	r := startRun(t, Options{Switch: switches, Extra: []net.Listener{extra}})
	first := r.pid(t, 0)
	other := &running{base: "http://" + extra.Addr().String()}
	if got := other.pid(t, 0); got != first {
		t.Fatalf("the extra socket is served by %d, the child is %d", got, first)
	}
	switches <- "a new build"
	second := r.pid(t, first)
	testutil.WaitFor(t, 15*time.Second, "the first child to stop", func() bool { return gone(first) })
	if got := other.pid(t, first); got != second {
		t.Errorf("after the switch the extra socket is served by %d, the child is %d", got, second)
	}
}
