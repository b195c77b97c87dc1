package main

// Several instances on NATS JetStream, as real processes on loopback: the
// zealgo binary built by TestMain serves, runs its task workers and runs
// the shared NATS server (zealgo nats); Debian's nginx balances between
// the instances.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/testutil"
)

// clusterApp logs in (a session value), dispatches a task for a logged-in
// user with API.Task, and names the process that answered.
var clusterApp = map[string]string{
	"api/login.go": head + `var post = func(api *host.API) any {
	api.G().Session.Set("user", api.String("user"))
	api.G().Session.Rotate()
	return map[string]any{"ok": true}
}
`,
	"api/ping.go": head + `var ping = func(api *host.API) any { return "pong" }
`,
	"api/pid.go": "//go:build ignore\n\npackage main\n\nimport \"os\"\n\nvar pid = func() any { return map[string]any{\"pid\": os.Getpid()} }\n",
	"api/dispatch.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"os\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		`var post = func(api *host.API) any {
	user := api.G().Session.String("user")
	if user == "" {
		api.Response(map[string]any{"error": "not logged in"}, 401)
		return nil
	}
	n, _ := api.Int("n")
	ms, _ := api.Int("ms")
	id, err := api.Task(host.Task{Handler: "/task/work", Args: []any{n, ms}})
	if err != nil {
		api.Response(map[string]any{"error": err.Error()}, 503)
		return nil
	}
	return map[string]any{"id": id, "pid": os.Getpid(), "user": user}
}
`,
	"task/work.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"time\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		`var work = func(ti *host.TaskInfo, n int, ms int) any {
	time.Sleep(time.Duration(ms) * time.Millisecond)
	return map[string]any{"n": n, "delivery": ti.Delivery}
}
`,
}

// process is a zealgo process of the test, killed at its end.
type process struct {
	cmd    *exec.Cmd
	logs   *testutil.Buffer
	addr   string
	exited chan struct{}
	server int // the serving process below serve's supervisor
}

// start starts the zealgo binary with args and env.
func start(t *testing.T, addr string, env []string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(binary, args...), logs: &testutil.Buffer{}, addr: addr, exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	// A file a handler or task writes at a relative path lands in a
	// temporary directory, not in this package's (interpreted files had
	// an empty environment before fd85a66: a task of the cluster test
	// joined an unset $ZEALGO_TEST_MARKS with its file names and left
	// ~3000 files <n>.<delivery>.<unixnano> here).
	p.cmd.Dir = t.TempDir()
	p.cmd.Stderr = p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s (pid %d) log:\n%s", strings.Join(args[:1], " "), p.cmd.Process.Pid, tail(p.logs.String(), 40))
		}
	})
	return p
}

// kill ends the process with SIGKILL and waits for it; for serve, the
// serving process and the supervisor together, as when the machine fails.
func (p *process) kill() {
	kids, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p.cmd.Process.Pid))
	var pids []int
	for _, f := range kids {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(field); err == nil {
				pids = append(pids, n)
			}
		}
	}
	// The supervisor is frozen first, so that it neither restarts the
	// serving process nor, by dying first, lets it see the supervisor gone
	// and shut down gracefully (which fails its running tasks) before its
	// own SIGKILL lands.
	_ = p.cmd.Process.Signal(syscall.SIGSTOP)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL) // by its pid
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// waitHTTP waits until the instance answers /api/ping.
func (p *process) waitHTTP(t *testing.T) {
	t.Helper()
	testutil.WaitFor(t, 30*time.Second, "instance "+p.addr+" to answer", func() bool {
		select {
		case <-p.exited:
			t.Fatalf("instance %s exited:\n%s", p.addr, p.logs)
		default:
		}
		resp, err := http.Get("http://" + p.addr + "/api/ping")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// startNATS runs `zealgo nats` on a free port with a token and returns
// the URL the instances use.
func startNATS(t *testing.T) string {
	t.Helper()
	addr := testutil.FreeAddr(t)
	p := start(t, addr, []string{"ZEALGO_NATS_TOKEN=cluster-token"}, "nats", "--addr", addr, "--data", t.TempDir())
	testutil.WaitFor(t, 15*time.Second, "zealgo nats to serve", func() bool {
		return strings.Contains(p.logs.String(), "zealgo nats serving")
	})
	return "nats://cluster-token@" + addr
}

// instance starts `zealgo serve` on root with its own data directory,
// sharing NATS at natsURL.
func instance(t *testing.T, root, data, addr, natsURL string) *process {
	t.Helper()
	p := start(t, addr, []string{"ZEALGO_SESSION_SECRET=" + strings.Repeat("c", 40)},
		"serve", "--root", root, "--addr", addr, "--data", data, "--nats", natsURL,
		"--task-workers", "2", "--task-ack-wait", "2s")
	p.waitHTTP(t)
	p.server = supervisedPID(t, p.cmd.Process.Pid)
	return p
}

// startNginx runs Debian's nginx in the foreground with a configuration
// of the test's own, balancing between the upstream addresses.
func startNginx(t *testing.T, upstreams ...string) string {
	t.Helper()
	bin := "nginx"
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		bin = "/usr/sbin/nginx"
	}
	bin = testutil.NeedProgram(t, bin, "apt-get install nginx")
	dir, addr := t.TempDir(), testutil.FreeAddr(t)
	var servers strings.Builder
	for _, u := range upstreams {
		fmt.Fprintf(&servers, "    server %s max_fails=1 fail_timeout=2s;\n", u)
	}
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  upstream zealgo {
%[2]s    keepalive 16;
  }
  server {
    listen %[3]s;
    location / {
      proxy_pass http://zealgo;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_next_upstream error timeout http_502;
      proxy_connect_timeout 1s;
    }
  }
}
`, dir, servers.String(), addr)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // by its pid
		_ = cmd.Wait()
	})
	testutil.WaitFor(t, 10*time.Second, "nginx to listen", func() bool {
		resp, err := http.Get("http://" + addr + "/api/ping")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	return "http://" + addr
}

// finishRE matches the default finish callback's record of a task.
var finishRE = regexp.MustCompile(`msg="task (finished|failed)" id=(\d+) task=/task/work`)

// redeliveredRE matches the record of a task that ended on a second or
// later delivery.
var redeliveredRE = regexp.MustCompile(`msg="task finished" id=\d+ task=/task/work result="{\\"delivery\\":[2-9]`)

// logPoll is how often a wait scans whole logs of thousands of tasks:
// run back to back, the scans would take a core from the processes under
// test and from this process's goroutines that read their logs.
const logPoll = 100 * time.Millisecond

// finishes counts the task ends each log records, by task id.
func finishes(logs ...string) (ok, failed map[int64]int) {
	ok, failed = map[int64]int{}, map[int64]int{}
	for _, l := range logs {
		for _, m := range finishRE.FindAllStringSubmatch(l, -1) {
			id, _ := strconv.ParseInt(m[2], 10, 64)
			if m[1] == "finished" {
				ok[id]++
			} else {
				failed[id]++
			}
		}
	}
	return ok, failed
}

// dispatched is what the client learnt of one dispatch.
type dispatched struct {
	ID   int64
	PID  int
	User string
}

// clusterClient is a logged-in client behind nginx.
type clusterClient struct {
	base       string
	c          *http.Client
	mu         sync.Mutex
	got        []dispatched
	logouts    atomic.Int64 // answers 401: the session was lost
	retried    atomic.Int64 // dispatches retried after an error or a 5xx
	dispatches atomic.Int64
	killAt     int64         // the count of dispatches that closes reached
	reached    chan struct{} // closed at killAt dispatches
}

// dispatch sends task n until an instance accepts it (or logs the
// client out), retrying for at most 10s.
func (cc *clusterClient) dispatch(t *testing.T, n, ms int) {
	var body []byte
	code := 0
	answered := testutil.Poll(10*time.Second, func() bool {
		resp, err := cc.c.Post(cc.base+"/api/dispatch", "application/json", strings.NewReader(fmt.Sprintf(`{"n":%d,"ms":%d}`, n, ms)))
		if err != nil {
			cc.retried.Add(1)
			return false
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		code = resp.StatusCode
		if code != 200 && code != http.StatusUnauthorized {
			cc.retried.Add(1)
			return false
		}
		return true
	})
	switch {
	case !answered:
		t.Errorf("task %d: no instance accepted it within 10s", n)
		return
	case code == http.StatusUnauthorized:
		cc.logouts.Add(1)
		t.Errorf("task %d: the client is logged out: %s", n, body)
		return
	}
	var d dispatched
	if err := json.Unmarshal(body, &d); err != nil || d.ID == 0 || d.User != "ada" {
		t.Errorf("task %d: %s", n, body)
		return
	}
	cc.mu.Lock()
	cc.got = append(cc.got, d)
	cc.mu.Unlock()
	if cc.dispatches.Add(1) == cc.killAt {
		close(cc.reached)
	}
}

// run dispatches tasks from to to-1 with conc clients at once.
func (cc *clusterClient) run(t *testing.T, from, to, conc, ms int) {
	var wg sync.WaitGroup
	next := atomic.Int64{}
	next.Store(int64(from))
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := int(next.Add(1) - 1); n < to; n = int(next.Add(1) - 1) {
				cc.dispatch(t, n, ms)
			}
		}()
	}
	wg.Wait()
}

// TestClusterBehindNginx: two instances share one NATS server (zealgo
// nats) behind nginx. A client logs in through nginx and dispatches 1,000
// tasks; one instance is killed with SIGKILL mid-load and started again.
// The client stays logged in throughout (sessions in NATS key-value);
// every task it got an id for finishes, and exactly once, except that the
// end being handed to the finish callback at the moment of the kill may
// be handed over again after the restart (at least once); none fails; the
// restarted instance takes its share of new tasks and receives the ends
// of the tasks it dispatched before it died.
func TestClusterBehindNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for about 30 s")
	}
	// Mostly waiting on its processes: it runs beside TestTieredServe,
	// which mostly waits on native builds, after
	// the package's other tests (its deadlines are of 10 s and more).
	t.Parallel()
	natsURL := startNATS(t)
	root := testutil.WriteTree(t, clusterApp)
	addrA, addrB := testutil.FreeAddr(t), testutil.FreeAddr(t)
	dataB := t.TempDir()
	a := instance(t, root, t.TempDir(), addrA, natsURL)
	b1 := instance(t, root, dataB, addrB, natsURL)
	base := startNginx(t, addrA, addrB)

	jar, _ := cookiejar.New(nil)
	cc := &clusterClient{base: base, c: &http.Client{Jar: jar, Timeout: 15 * time.Second}, killAt: 300, reached: make(chan struct{})}
	resp, err := cc.c.Post(base+"/api/login", "application/x-www-form-urlencoded", strings.NewReader("user=ada"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("login through nginx: %v %v", resp, err)
	}
	resp.Body.Close()

	const total, ms = 1000, 200 // b's workers hold tasks when it dies
	killed := make(chan time.Time, 1)
	go func() { // b dies mid-load, with requests and tasks in flight
		<-cc.reached
		b1.kill()
		killed <- time.Now()
	}()
	cc.run(t, 0, 600, 8, ms)
	killedAt := <-killed
	b2 := instance(t, root, dataB, addrB, natsURL)
	t.Logf("b was down for %v", time.Since(killedAt).Round(time.Millisecond))
	testutil.WaitFor(t, 15*time.Second, "nginx to send requests to b again after fail_timeout", func() bool {
		return pidAt(base+"/api/pid") == b2.server
	})
	cc.run(t, 600, total, 8, ms)
	if t.Failed() {
		return
	}

	pids := map[int]string{a.server: "a", b1.server: "b", b2.server: "b restarted"}
	share := map[string]int{}
	for _, d := range cc.got {
		share[pids[d.PID]]++
	}
	t.Logf("%d dispatches (%d retried), by instance: %v", len(cc.got), cc.retried.Load(), share)
	if len(cc.got) != total || share["a"] == 0 || share["b"] == 0 || share["b restarted"] == 0 {
		t.Fatalf("dispatches by instance: %v, want %d spread over a, b and b restarted", share, total)
	}
	var ok, failed map[int64]int
	testutil.WaitForEvery(t, 30*time.Second, logPoll, "every task to finish", func() bool {
		ok, failed = finishes(a.logs.String(), b1.logs.String(), b2.logs.String())
		for _, d := range cc.got {
			if ok[d.ID]+failed[d.ID] == 0 {
				return false
			}
		}
		return true
	})
	js, err := natsrv.Connect(context.Background(), natsURL, natsrv.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	testutil.WaitFor(t, 30*time.Second, "JetStream to have nothing left to deliver (a second end would come before)", func() bool {
		return testutil.JetStreamSettled(js.JS, "ZEALGO_TASKS", "ZEALGO_RESULTS")
	})
	ok, failed = finishes(a.logs.String(), b1.logs.String(), b2.logs.String())
	twice := 0
	for _, d := range cc.got {
		if failed[d.ID] > 0 {
			t.Errorf("task %d failed", d.ID)
		}
		if ok[d.ID] > 1 {
			twice++
		}
	}
	if twice > 1 {
		t.Errorf("%d tasks finished more than once; at most the one being handed over at the kill may", twice)
	}
	okB1, _ := finishes(b1.logs.String())
	okB2, _ := finishes(b2.logs.String())
	late := 0
	for _, d := range cc.got {
		if pids[d.PID] == "b" && okB1[d.ID] == 0 && okB2[d.ID] > 0 {
			late++
		}
	}
	t.Logf("ends: %d tasks; %d handed over twice; %d dispatched by b before the kill reached b after its restart; %d extra ends of tasks whose dispatch answer was lost",
		len(cc.got), twice, late, len(ok)-countIDs(cc.got, ok))
	if late == 0 {
		t.Error("no end of a task that b dispatched before the kill reached b after its restart")
	}
	redelivered := 0
	for _, l := range []string{a.logs.String(), b1.logs.String(), b2.logs.String()} {
		redelivered += len(redeliveredRE.FindAllString(l, -1))
	}
	t.Logf("%d tasks ended on a later delivery (their worker died with b)", redelivered)
	if redelivered == 0 {
		t.Error("no task was delivered again: b's workers held none when it died")
	}
	if cc.logouts.Load() != 0 {
		t.Errorf("%d answers said the client was logged out", cc.logouts.Load())
	}
}

// countIDs counts the dispatched tasks that have an end in ends.
func countIDs(got []dispatched, ends map[int64]int) int {
	n := 0
	for _, d := range got {
		if ends[d.ID] > 0 {
			n++
		}
	}
	return n
}

// TestServeKilledWithTasksQueued: a single instance with the embedded
// NATS server (the default) and one serial worker is killed with SIGKILL
// while most of its tasks wait in the queue; started again on the same
// data directory, it runs them, and every task finishes.
func TestServeKilledWithTasksQueued(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	t.Parallel()
	root, data, addr := testutil.WriteTree(t, clusterApp), t.TempDir(), testutil.FreeAddr(t)
	args := []string{"serve", "--root", root, "--addr", addr, "--data", data, "--task-workers", "1",
		"--task-coroutine=false", "--task-ack-wait", "2s"}
	env := []string{"ZEALGO_SESSION_SECRET=" + strings.Repeat("k", 40)}
	first := start(t, addr, env, args...)
	first.waitHTTP(t)
	if !strings.Contains(first.logs.String(), "embedded at nats://127.0.0.1:") {
		t.Fatalf("serve did not embed NATS:\n%s", first.logs)
	}
	jar, _ := cookiejar.New(nil)
	cc := &clusterClient{base: "http://" + addr, c: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
	if resp, err := cc.c.Post(cc.base+"/api/login", "application/x-www-form-urlencoded", strings.NewReader("user=ada")); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	const total = 40
	cc.run(t, 0, total, 4, 100) // 100 ms each, one at a time: most wait
	first.kill()
	before, _ := finishes(first.logs.String())
	t.Logf("%d of %d tasks had finished at the kill", len(before), total)
	if len(before) >= total-5 {
		t.Fatalf("%d of %d tasks finished before the kill; the test needs them queued", len(before), total)
	}
	second := start(t, addr, env, args...)
	second.waitHTTP(t)
	testutil.WaitForEvery(t, 30*time.Second, logPoll, "the queued tasks to run after the restart", func() bool {
		ok, _ := finishes(first.logs.String(), second.logs.String())
		return countIDs(cc.got, ok) == total
	})
	ok, failed := finishes(first.logs.String(), second.logs.String())
	checkFinishes(t, ok, failed)
}

// TestServeChildKilledWithTasksQueued: under serve's supervisor, which
// runs the embedded NATS server, the serving process is killed with
// SIGKILL while most of its tasks wait in the queue; the supervisor
// replaces it at once, the replacement connects to the same server and
// runs them, and every task finishes.
func TestServeChildKilledWithTasksQueued(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	t.Parallel()
	root, data, addr := testutil.WriteTree(t, clusterApp), t.TempDir(), testutil.FreeAddr(t)
	p := start(t, addr, []string{"ZEALGO_SESSION_SECRET=" + strings.Repeat("k", 40)}, "serve", "--root", root,
		"--addr", addr, "--data", data, "--task-workers", "1", "--task-coroutine=false", "--task-ack-wait", "2s")
	p.waitHTTP(t)
	if !strings.Contains(p.logs.String(), "embedded at nats://127.0.0.1:") || !strings.Contains(p.logs.String(), "run by the supervisor") {
		t.Fatalf("the supervisor does not run the embedded NATS server:\n%s", p.logs)
	}
	child := supervisedPID(t, p.cmd.Process.Pid)
	jar, _ := cookiejar.New(nil)
	cc := &clusterClient{base: "http://" + addr, c: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
	if resp, err := cc.c.Post(cc.base+"/api/login", "application/x-www-form-urlencoded", strings.NewReader("user=ada")); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	const total = 40
	cc.run(t, 0, total, 4, 100) // 100 ms each, one at a time: most wait
	before, _ := finishes(p.logs.String())
	if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d tasks had finished at the kill", len(before), total)
	if len(before) >= total-5 {
		t.Fatalf("%d of %d tasks finished before the kill; the test needs them queued", len(before), total)
	}
	testutil.WaitForEvery(t, 30*time.Second, logPoll, "the queued tasks to run in the replacement", func() bool {
		ok, _ := finishes(p.logs.String())
		return countIDs(cc.got, ok) == total
	})
	if next := supervisedPID(t, p.cmd.Process.Pid); next == child {
		t.Errorf("the tasks ended in the killed process %d", child)
	}
	ok, failed := finishes(p.logs.String())
	checkFinishes(t, ok, failed)
}

// checkFinishes fails the test on a failed task, or on more than one task
// finished twice (an end handed over at the moment of a kill -9 may be
// handed over again after the restart).
func checkFinishes(t *testing.T, ok, failed map[int64]int) {
	t.Helper()
	if len(failed) != 0 {
		t.Errorf("failed tasks: %v", failed)
	}
	twice := 0
	for _, n := range ok {
		if n > 1 {
			twice++
		}
	}
	if twice > 1 {
		t.Errorf("%d tasks finished more than once", twice)
	}
}
