package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// Crash isolation, run as a user runs it: the real binary, `zealgo serve`
// under its supervisor, on a loopback port.

// crashFiles are handler files that end, or try to end, the process.
var crashFiles = map[string]string{
	"api/ping.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"os\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		"var ping = func(api *host.API) any { return map[string]any{\"pid\": os.Getpid()} }\n",
	"api/after.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"time\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		"var after = func(api *host.API) any {\n\ttime.AfterFunc(time.Millisecond, func() { panic(\"boom in AfterFunc\") })\n\treturn \"scheduled\"\n}\n",
	"api/deep.go": head + "func rec(n int) int {\n\tif n == 0 {\n\t\treturn 0\n\t}\n\treturn 1 + rec(n-1)\n}\n\n" +
		"var deep = func(api *host.API) any { return rec(1000000) }\n",
	"api/loop.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		"var loop = func(api *host.API) any {\n\tfmt.Println(\"loop started\")\n\tn := 0\n\tfor {\n\t\tn++\n\t}\n\treturn n\n}\n",
}

// supervised starts serve with the crash files and returns the
// supervisor's process, the base URL and the log; every process it
// leaves is killed by its pid when the test ends.
func supervised(t *testing.T, root string, extra ...string) (*supervisedServer, string, *testutil.Buffer) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the server processes")
	}
	cmd, base, logs := serve(t, root, extra...)
	s := &supervisedServer{pid: cmd.Process.Pid, base: base, seen: map[int]bool{}}
	t.Cleanup(s.killAll) // runs before serve's own cleanup, which reaps the supervisor
	return s, base, logs
}

type supervisedServer struct {
	pid  int
	base string
	mu   sync.Mutex
	seen map[int]bool // every descendant seen, to kill at the end
}

// descendants lists the processes below the supervisor.
func (s *supervisedServer) descendants(t *testing.T) []int {
	var out []int
	queue := []int{s.pid}
	for len(queue) > 0 {
		kids := childPIDs(t, queue[0])
		queue = append(queue[1:], kids...)
		out = append(out, kids...)
	}
	s.mu.Lock()
	for _, p := range out {
		s.seen[p] = true
	}
	s.mu.Unlock()
	return out
}

func (s *supervisedServer) killAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.seen {
		if alive(p) {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(after, "Z")
}

// cpuTicks returns the CPU time pid has used, in clock ticks.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	_, after, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(after) // f[0] is field 3 (state); utime and stime are fields 14 and 15
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

var noKeepAlive = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// servingPID returns the pid that answers /api/ping, once one does.
func servingPID(t *testing.T, base string, not int) int {
	t.Helper()
	var pid int
	testutil.WaitFor(t, 15*time.Second, "a server process other than "+strconv.Itoa(not)+" to answer", func() bool {
		pid = pingPID(base)
		return pid != 0 && pid != not
	})
	return pid
}

// supervisedPID returns the process that the supervisor sup runs, once it
// runs one: the same only child in looks at least 20ms apart, since the
// first process a Go program starts is preceded by a child that lives a
// few microseconds (os/exec's probe of pidfd support).
func supervisedPID(t *testing.T, sup int) int {
	t.Helper()
	prev := 0
	var since time.Time
	testutil.WaitFor(t, 15*time.Second, "the supervisor's server process", func() bool {
		kids := childPIDs(t, sup)
		if len(kids) != 1 {
			prev = 0
			return false
		}
		if kids[0] != prev {
			prev, since = kids[0], time.Now()
		}
		return time.Since(since) >= 20*time.Millisecond
	})
	return prev
}

// loggedServerPID waits for the server's "zealgo serving" line in log and
// returns the pid it names (the process that serves, under the supervisor).
func loggedServerPID(t *testing.T, log fmt.Stringer) int {
	t.Helper()
	re := regexp.MustCompile(`msg="zealgo serving" .*pid=(\d+)`)
	pid := 0
	testutil.WaitFor(t, 15*time.Second, "the server's \"zealgo serving\" line", func() bool {
		if m := re.FindStringSubmatch(log.String()); m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
		return pid != 0
	})
	return pid
}

func pingPID(base string) int { return pidAt(base + "/api/ping") }

// pidAt returns the pid that url answers ({"pid": n}), or 0.
func pidAt(url string) int {
	resp, err := noKeepAlive.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var v struct{ PID int }
	if json.NewDecoder(resp.Body).Decode(&v) != nil {
		return 0
	}
	return v.PID
}

// clientLoop requests /api/ping on a new connection after another until
// stopped, and counts the outcomes.
type clientLoop struct {
	stop                  chan struct{}
	done                  chan struct{}
	ok, refused, failures int
}

func startClientLoop(base string) *clientLoop {
	l := &clientLoop{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-l.stop:
				return
			default:
			}
			resp, err := noKeepAlive.Get(base + "/api/ping")
			switch {
			case errors.Is(err, syscall.ECONNREFUSED):
				l.refused++
			case err != nil:
				l.failures++
			default:
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				l.ok++
			}
		}
	}()
	return l
}

func (l *clientLoop) halt() { close(l.stop); <-l.done }

// TestServeSurvivesCrashes: a panic in a func given to time.AfterFunc is
// logged and ends nothing; a recursion a million calls deep ends the
// serving process, and a new one answers within a second. A client loop
// running across both is never refused a connection.
func TestServeSurvivesCrashes(t *testing.T) {
	s, base, logs := supervised(t, testutil.WriteTree(t, crashFiles))
	first := servingPID(t, base, 0)
	loop := startClientLoop(base)

	if code, _, body := fetch(t, "GET", base+"/api/after", "", ""); code != 200 || body != "scheduled" {
		t.Fatalf("/api/after: %d %s", code, body)
	}
	testutil.WaitFor(t, 10*time.Second, "the AfterFunc panic in the log", func() bool {
		return strings.Contains(logs.String(), `msg="panic in a goroutine" file=api/after.go panic="boom in AfterFunc"`)
	})
	if pid := pingPID(base); pid != first {
		t.Fatalf("after the AfterFunc panic /api/ping answers from %d, want %d still", pid, first)
	}

	_, err := noKeepAlive.Get(base + "/api/deep")
	crashed := time.Now()
	if err == nil {
		t.Fatal("/api/deep answered; the process should have died")
	}
	second := servingPID(t, base, first)
	recovered := time.Since(crashed)
	loop.halt()
	t.Logf("deep recursion: served again %v after the crash; client loop: %d answered, %d failed, %d refused",
		recovered.Round(time.Millisecond), loop.ok, loop.failures, loop.refused)
	if recovered > time.Second {
		t.Errorf("served again only %v after the crash, want within 1s", recovered)
	}
	if loop.refused != 0 || loop.ok == 0 {
		t.Errorf("client loop: %d refused, %d answered", loop.refused, loop.ok)
	}
	if alive(first) {
		t.Errorf("the crashed process %d still runs", first)
	}
	if !strings.Contains(logs.String(), "goroutine stack exceeds 134217728-byte limit") ||
		!strings.Contains(logs.String(), fmt.Sprintf(`msg="supervisor: server process died" pid=%d status="exit status 2"`, first)) {
		t.Errorf("the crash is not logged:\n%.3000s", logs)
	}
	if kids := s.descendants(t); len(kids) != 1 || kids[0] != second {
		t.Errorf("processes below the supervisor: %v, want [%d]", kids, second)
	}
}

// TestServeLoopingHandler: a handler that loops forever gets 503 at the
// execution limit; the process running it is replaced, and the CPU is idle
// again within twice the limit.
func TestServeLoopingHandler(t *testing.T) {
	const limit = time.Second
	s, base, logs := supervised(t, testutil.WriteTree(t, crashFiles), "--max-execution-time", limit.String())
	first := servingPID(t, base, 0)
	start := time.Now()
	code, _, body := fetch(t, "GET", base+"/api/loop", "", "")
	if code != 503 || !strings.Contains(body, `"error":"service_unavailable"`) {
		t.Fatalf("/api/loop: %d %s", code, body)
	}
	testutil.WaitFor(t, 10*time.Second, "the looping process to exit", func() bool { return !alive(first) })
	idle := time.Since(start)
	t.Logf("looping handler: 503 then the process replaced; its CPU stopped %v after the request began (limit %v)", idle.Round(time.Millisecond), limit)
	if idle > 2*limit {
		t.Errorf("the looping process ran %v, want at most twice the limit (%v)", idle, 2*limit)
	}
	second := servingPID(t, base, first)
	pids := append([]int{s.pid}, s.descendants(t)...)
	var before int64
	for _, p := range pids {
		before += cpuTicks(p)
	}
	time.Sleep(500 * time.Millisecond)
	var after int64
	for _, p := range pids {
		after += cpuTicks(p)
	}
	if used := after - before; used > 15 { // ticks of 10ms: a looping core would use 50
		t.Errorf("processes %v used %d ticks of CPU in 500ms once replaced", pids, used)
	}
	if !strings.Contains(logs.String(), fmt.Sprintf(`msg="supervisor: the server process asks to be replaced" pid=%d`, first)) ||
		!strings.Contains(logs.String(), fmt.Sprintf(`msg="supervisor: server process stopped" pid=%d`, first)) {
		t.Errorf("log:\n%s", logs)
	}
	if pid := pingPID(base); pid != second {
		t.Errorf("/api/ping answers from %d, want %d", pid, second)
	}
}

// TestServeCrashLoopBacksOff: server processes that cannot start (their
// root is gone) are started again after delays that double, each logged;
// once the root is back, the next one serves.
func TestServeCrashLoopBacksOff(t *testing.T) {
	root := testutil.WriteTree(t, crashFiles)
	s, base, logs := supervised(t, root)
	first := servingPID(t, base, 0)
	waitStable(t, logs, first)
	if err := os.Rename(root, root+".away"); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(first, syscall.SIGKILL)
	testutil.WaitFor(t, 15*time.Second, "three growing delays", func() bool {
		return strings.Contains(logs.String(), "delay=400ms deaths_in_a_row=3")
	})
	for _, d := range []string{"delay=100ms deaths_in_a_row=1", "delay=200ms deaths_in_a_row=2"} {
		if !strings.Contains(logs.String(), d) {
			t.Errorf("log lacks %q", d)
		}
	}
	s.descendants(t)
	if n := strings.Count(logs.String(), `msg="supervisor: server process started"`); n > 6 {
		t.Errorf("%d starts by the third delay: no backoff", n)
	}
	if err := os.Rename(root+".away", root); err != nil {
		t.Fatal(err)
	}
	servingPID(t, base, first)
}

// TestServeSIGTERMLeavesNothing: SIGTERM to the supervisor, while a
// handler loops and task workers run, ends every process within the
// execution limit plus the shutdown, and the supervisor exits 0.
func TestServeSIGTERMLeavesNothing(t *testing.T) {
	root := testutil.WriteTree(t, crashFiles)
	cmd, base, logs := serve(t, root, "--task-workers", "1", "--max-execution-time", "1s")
	s := &supervisedServer{pid: cmd.Process.Pid, base: base, seen: map[int]bool{}}
	t.Cleanup(s.killAll)
	servingPID(t, base, 0)
	testutil.WaitFor(t, 15*time.Second, "the task worker", func() bool { return len(s.descendants(t)) == 2 })
	looping := make(chan int, 1)
	go func() {
		resp, err := noKeepAlive.Get(base + "/api/loop")
		if err != nil {
			looping <- 0
			return
		}
		resp.Body.Close()
		looping <- resp.StatusCode
	}()
	testutil.WaitFor(t, 10*time.Second, "the looping handler to start", func() bool {
		return strings.Contains(logs.String(), "loop started")
	})
	procs := s.descendants(t)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("supervisor: %v\n%s", err, logs)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the supervisor did not exit after SIGTERM:\n%s", logs)
	}
	if code := <-looping; code != 503 {
		t.Errorf("the looping request got %d, want 503", code)
	}
	for _, p := range append(procs, s.pid) {
		if alive(p) {
			t.Errorf("process %d still runs after the supervisor exited", p)
		}
	}
	if !strings.Contains(logs.String(), `msg="supervisor: stopped"`) {
		t.Errorf("log:\n%s", logs)
	}
}

// TestServeUnsupervised: --supervise=false serves in the process itself.
func TestServeUnsupervised(t *testing.T) {
	cmd, base, _ := serve(t, testutil.WriteTree(t, crashFiles), "--supervise=false")
	if pid := servingPID(t, base, 0); pid != cmd.Process.Pid {
		t.Errorf("/api/ping answers from %d, want the process itself, %d", pid, cmd.Process.Pid)
	}
}

// stableAfter is the supervisor's default StableAfter: a server process
// ready for that long has run well, and its death is a crash, not a loop.
const stableAfter = 250 * time.Millisecond

// waitStable waits until the supervisor has logged pid ready and that
// report is older than stableAfter.
func waitStable(t *testing.T, logs *testutil.Buffer, pid int) {
	t.Helper()
	line := regexp.MustCompile(fmt.Sprintf(`time=(\S+) level=INFO msg="supervisor: server process ready" pid=%d `, pid))
	testutil.WaitFor(t, 15*time.Second, fmt.Sprintf("process %d ready for %v", pid, stableAfter), func() bool {
		m := line.FindStringSubmatch(logs.String())
		if m == nil {
			return false
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatalf("the ready report's time %q: %v", m[1], err)
		}
		return time.Since(at) > stableAfter
	})
}
