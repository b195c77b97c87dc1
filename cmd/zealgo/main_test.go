package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// binary is the zealgo command built once for these tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zealgo-cmd")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "zealgo")
	testutil.BuildStatic()
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	before := listDir(".")
	code := m.Run()
	os.RemoveAll(dir)
	// No test may leave files in this package's directory (a process of
	// a test runs in a temporary directory: start, cluster_test.go).
	for name := range listDir(".") {
		if !before[name] {
			fmt.Fprintf(os.Stderr, "a test left %s in cmd/zealgo\n", name)
			code = 1
		}
	}
	os.Exit(code)
}

// listDir returns the names in dir.
func listDir(dir string) map[string]bool {
	names := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names[e.Name()] = true
	}
	return names
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runIn(t, "", nil, binary, args...)
}

const head = "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n"

func TestCheckReportsEveryProblem(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"api/good.go":         head + "var good = func(api *host.API) any { return nil }\n",
		"api/typo/a.go":       head + "var a = func(api *host.API) any {\n\treturn api.Respnse(1, 2)\n}\n",
		"api/syntax.go":       head + "var syntax = func(api *host.API) any {\n\treturn (\n}\n",
		"public/index.go":     head + "var index = func(api *host.API) string { return \"home\" }\n",
		"public/broken.go":    head + "var broken = func(api *host.API) any { return undefinedName }\n",
		"task/report.go":      head + "var report = func(n int) any { return n }\n",
		"task/nameless.go":    head + "var other = func() any { return nil }\n",
		"public/css/site.css": "body{}",
		"api/unlinked.go": "//go:build ignore\n\npackage main\n\nimport \"example.com/shop/store\"\n\n" +
			"var unlinked = func(s *store.Store) any { return nil }\n",
	})
	out, errOut, code := run(t, "check", "--root", root)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, errOut)
	}
	want := []string{
		"api/syntax.go:9:1: expected operand, found '}'",
		"api/typo/a.go:8:9: api.Respnse is no method or field of *host.API; did you mean Response?",
		"public/broken.go:7:47: undefined: undefinedName",
		"task/nameless.go: a task file must declare var nameless = func(args...) any",
		"api/unlinked.go:5:8: package example.com/shop/store is not linked into this binary: interpreted files can import only " +
			"the standard library and the packages whose symbol tables (yaegi extract) the application registers with app.Symbols; " +
			"run the application's own binary (e.g. go run ./sample check)",
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("check output lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "\n"); n != len(want) {
		t.Errorf("check printed %d lines, want %d:\n%s", n, len(want), out)
	}
	if !strings.Contains(errOut, "5 problem(s) in 8 file(s)") {
		t.Errorf("summary: %s", errOut)
	}
	clean := testutil.WriteTree(t, map[string]string{"api/good.go": head + "var good = func(api *host.API) any { return nil }\n"})
	if _, errOut, code := run(t, "check", "--root", clean); code != 0 || !strings.Contains(errOut, "1 file(s) ok") {
		t.Fatalf("clean tree: exit %d, %s", code, errOut)
	}
}

func TestCheckRepositoryHandlers(t *testing.T) {
	out, errOut, _ := run(t, "check", "--root", "../..")
	// The sample application's files import its store, which only the
	// sample links (go run ./sample check; its TestSampleCheck): the stock
	// binary reads the store and what it imports from source, and names
	// their problems at their own files.
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		sample := false
		for _, p := range []string{"api/learn/", "public/learn/", "sample/store/", "internal/sqldb/"} {
			sample = sample || strings.HasPrefix(line, p)
		}
		if line != "" && !sample {
			t.Errorf("the repository's handler files do not check: %s\n%s", line, errOut)
		}
	}
}

func TestRoutes(t *testing.T) {
	out, errOut, code := run(t, "routes", "--root", "../..")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	flat := strings.Join(strings.Fields(out), " ") // column widths follow the longest URL
	for _, w := range []string{
		"/api/device/list GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS api/device/list.go",
		"/api/users GET, HEAD, POST, OPTIONS",
	} {
		if !strings.Contains(flat, w) {
			t.Errorf("routes lacks %q:\n%s", w, out)
		}
	}
}

// TestHelpListsCommands: zealgo --help and zealgo help list every command
// with one line each, on stdout, and exit 0.
func TestHelpListsCommands(t *testing.T) {
	for _, arg := range []string{"--help", "help"} {
		out, errOut, code := run(t, arg)
		if code != 0 || errOut != "" {
			t.Fatalf("%s: exit %d, stderr %q", arg, code, errOut)
		}
		for _, cmd := range []string{"serve", "check", "routes", "help"} {
			if !regexp.MustCompile(`(?m)^  ` + cmd + ` +\S.*$`).MatchString(out) {
				t.Errorf("%s: no line for %s:\n%s", arg, cmd, out)
			}
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	if _, errOut, code := run(t, "frobnicate"); code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// serve starts `zealgo serve` as a real process and waits until it answers.
func serve(t *testing.T, root string, extra ...string) (*exec.Cmd, string, *testutil.Buffer) {
	t.Helper()
	return serveEnv(t, root, nil, extra...)
}

// serveEnv is serve with env added to the process's environment (for a
// parallel test, which cannot t.Setenv).
func serveEnv(t *testing.T, root string, env []string, extra ...string) (*exec.Cmd, string, *testutil.Buffer) {
	t.Helper()
	addr := testutil.FreeAddr(t)
	logs := &testutil.Buffer{}
	// --tiered=false: the repository's root is a module, whose background build (tier_test.go) these tests do not need.
	cmd := exec.Command(binary, append([]string{"serve", "--root", root, "--addr", addr, "--tiered=false"}, extra...)...)
	cmd.Stderr, cmd.Env = logs, append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if !testutil.Poll(10*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatalf("server did not start: %s", logs.String())
	}
	return cmd, "http://" + addr, logs
}

func fetch(t *testing.T, method, url, contentType, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestServeSpecEndpoints runs the repository's own handler files in the
// real binary: the example endpoints of the spec.
func TestServeSpecEndpoints(t *testing.T) {
	_, base, _ := serve(t, "../..")
	for _, tc := range []struct {
		method, path, ctype, body string
		code                      int
		want                      string
	}{
		{"GET", "/api/php/sapi_name", "", "", 200, `{"async":true,"sapi":"zealgo"}`},
		{"GET", "/api/php/get?a=1&b=two", "", "", 200, `{"async":true,"query_params":{"a":"1","b":"two"}}`},
		{"GET", "/api/device/list", "", "", 200, `{"devices":[{"id":1,"name":"sensor"},{"id":2,"name":"relay"}],"method":"GET"}`},
		{"POST", "/api/device/list", "application/x-www-form-urlencoded", "name=lamp", 200, `{"body":{"name":"lamp"},"created":true,"method":"POST"}`},
		{"GET", "/api/users", "", "", 200, `{"users":[{"id":1,"name":"ada"},{"id":2,"name":"linus"}]}`},
		{"POST", "/api/users", "", "", 201, `{"created":true,"id":3}`},
	} {
		code, h, body := fetch(t, tc.method, base+tc.path, tc.ctype, tc.body)
		if code != tc.code || body != tc.want || h.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s %q, want %d %s", tc.method, tc.path, code, h.Get("Content-Type"), body, tc.code, tc.want)
		}
	}
	code, h, _ := fetch(t, "DELETE", base+"/api/users", "", "")
	if code != 405 || h.Get("Allow") != "GET, HEAD, POST, OPTIONS" {
		t.Errorf("DELETE /api/users: %d Allow %q", code, h.Get("Allow"))
	}
}

// slowFile is a handler that stays in flight until the server at its
// ?release= URL answers.
const slowFile = `package main

import (
	"fmt"
	"net/http"

	"github.com/zealgo/zealgo/host"
)

var slow = func(api *host.API) any {
	fmt.Println("handler started")
	resp, err := http.Get(api.String("release"))
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	return "done"
}
`

// TestServeGracefulShutdown: SIGTERM lets the request in flight finish,
// then the process exits 0. The handler is held until the test, having
// sent SIGTERM, lets it go.
func TestServeGracefulShutdown(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"api/slow.go": slowFile})
	// A drain delay makes the server log the start of its shutdown.
	cmd, base, logs := serve(t, root, "--drain-delay", "1ms")
	release := make(chan struct{})
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer held.Close()
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	defer let() // before held.Close, which waits for the held request
	result := make(chan string, 1)
	go func() {
		resp, err := http.Get(base + "/api/slow?release=" + url.QueryEscape(held.URL))
		if err != nil {
			result <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		result <- string(b)
	}()
	testutil.WaitFor(t, 10*time.Second, "the request to reach the handler", func() bool {
		return strings.Contains(logs.String(), "handler started")
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the server to begin its shutdown", func() bool {
		return strings.Contains(logs.String(), "zealgo draining")
	})
	let()
	if got := <-result; got != "done" {
		t.Fatalf("in-flight request got %q", got)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v; log %s", err, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server did not exit after SIGTERM")
	}
	if !strings.Contains(logs.String(), "zealgo stopped") {
		t.Errorf("log: %s", logs.String())
	}
}

// childPIDs lists the children of pid, from /proc/<pid>/task/*/children.
func childPIDs(t *testing.T, pid int) []int {
	t.Helper()
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for _, field := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(field); err == nil {
				out = append(out, n)
			}
		}
	}
	sort.Ints(out)
	return out
}

// isWorker reports whether pid is a `zealgo worker` process.
func isWorker(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	args := strings.Split(string(b), "\x00")
	return err == nil && len(args) == 3 && filepath.Base(args[0]) == "zealgo" && args[1] == "worker"
}

// TestServeTaskWorkers runs `zealgo serve --task-workers 2
// --task-coroutine=false --nats off` (the local pool, whose ids count
// from 1) as a real process: a handler dispatches a task
// and gets its id, the default finish callback logs the result, the two
// workers are children of the server, and SIGTERM to the server leaves
// none behind.
func TestServeTaskWorkers(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs /proc to find the worker processes")
	}
	root := testutil.WriteTree(t, map[string]string{
		"task/double.go": "//go:build ignore\n\npackage main\n\nvar double = func(n int) any { return map[string]any{\"double\": 2 * n} }\n",
		"api/go.go": head + `var post = func(api *host.API) any {
	id, err := api.App().Server().Task(host.Task{Handler: "/task/double", Args: []any{api.Input["n"]}})
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return map[string]any{"id": id}
}
`,
	})
	cmd, base, logs := serve(t, root, "--task-workers", "2", "--task-coroutine=false", "--nats", "off")
	var workers []int
	t.Cleanup(func() {
		for _, pid := range workers {
			if isWorker(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	// The server listens, then starts its workers before it answers.
	testutil.WaitFor(t, 15*time.Second, "the workers to start", func() bool {
		return strings.Contains(logs.String(), `msg="task workers started" workers=2 coroutine=false`)
	})
	server := loggedServerPID(t, logs)
	if kids := childPIDs(t, cmd.Process.Pid); len(kids) != 1 || kids[0] != server {
		t.Fatalf("the supervisor %d runs %v, want the server %d alone", cmd.Process.Pid, kids, server)
	}
	workers = childPIDs(t, server)
	if len(workers) != 2 || !isWorker(workers[0]) || !isWorker(workers[1]) {
		t.Fatalf("children of the server %d: %v, want 2 worker processes; log:\n%s", server, workers, logs)
	}
	if pids := fmt.Sprintf(`pids="[%d %d]"`, workers[0], workers[1]); !strings.Contains(logs.String(), pids) &&
		!strings.Contains(logs.String(), fmt.Sprintf(`pids="[%d %d]"`, workers[1], workers[0])) {
		t.Errorf("the log names other workers than %v:\n%s", workers, logs)
	}

	for i, n := range []int{21, 50} {
		code, _, body := fetch(t, "POST", base+"/api/go", "application/json", fmt.Sprintf(`{"n":%d}`, n))
		var got struct {
			ID    int64
			Error string
		}
		if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || got.ID != int64(i+1) {
			t.Fatalf("POST /api/go: %d %s (%v); want the task id %d", code, body, err, i+1)
		}
		want := fmt.Sprintf(`msg="task finished" id=%d task=/task/double result="{\"double\":%d}"`, got.ID, 2*n)
		testutil.WaitFor(t, 15*time.Second, "the finish of task "+fmt.Sprint(got.ID)+" in the log", func() bool {
			return strings.Contains(logs.String(), want)
		})
	}
	// A bad argument is a task error, logged, not a crash.
	if code, _, body := fetch(t, "POST", base+"/api/go", "application/json", `{"n":null}`); code != 200 || body != `{"id":3}` {
		t.Fatalf("POST /api/go with null: %d %s", code, body)
	}
	testutil.WaitFor(t, 15*time.Second, "the failure of task 3 in the log", func() bool {
		return strings.Contains(logs.String(), `msg="task failed" id=3 task=/task/double err="zealgo: task /task/double (id 3): argument 1: cannot use JSON null as int"`)
	})
	if now := childPIDs(t, server); fmt.Sprint(now) != fmt.Sprint(workers) {
		t.Fatalf("workers changed from %v to %v", workers, now)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v; log:\n%s", err, logs)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("server did not exit after SIGTERM; log:\n%s", logs)
	}
	for _, pid := range workers {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("worker %d still exists after the server exited (%v)", pid, err)
		}
	}
	if !strings.Contains(logs.String(), "zealgo stopped") {
		t.Errorf("log:\n%s", logs)
	}
}

// TestServePortFromEnvironment: without --addr, serve listens on :$PORT,
// as platforms that set PORT expect.
func TestServePortFromEnvironment(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"api/ping.go": head + "var ping = func(api *host.API) any { return \"pong\" }\n"})
	_, port, _ := net.SplitHostPort(testutil.FreeAddr(t))
	logs := &testutil.Buffer{}
	cmd := exec.Command(binary, "serve", "--root", root)
	cmd.Env = append(os.Environ(), "PORT="+port)
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://127.0.0.1:" + port + "/api/ping"
	testutil.WaitFor(t, 10*time.Second, "serve on $PORT", func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	if !strings.Contains(logs.String(), "addr=:"+port) {
		t.Errorf("log does not name :%s:\n%s", port, logs.String())
	}
}
