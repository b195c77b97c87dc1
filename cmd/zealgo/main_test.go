package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return o.String(), e.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
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
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("check output lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "\n"); n != len(want) {
		t.Errorf("check printed %d lines, want %d:\n%s", n, len(want), out)
	}
	if !strings.Contains(errOut, "4 problem(s) in 7 file(s)") {
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
	// sample links (go run ./sample check; its TestSampleCheck).
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" && !strings.HasPrefix(line, "api/learn/") && !strings.HasPrefix(line, "public/learn/") {
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

func TestUnknownCommand(t *testing.T) {
	if _, errOut, code := run(t, "frobnicate"); code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// serve starts `zealgo serve` as a real process and waits until it answers.
func serve(t *testing.T, root string, extra ...string) (*exec.Cmd, string, *testutil.Buffer) {
	t.Helper()
	addr := freeAddr(t)
	logs := &testutil.Buffer{}
	cmd := exec.Command(binary, append([]string{"serve", "--root", root, "--addr", addr}, extra...)...)
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start: %s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
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

// TestServeGracefulShutdown: SIGTERM lets the request in flight finish,
// then the process exits 0.
func TestServeGracefulShutdown(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"api/slow.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"time\"\n)\n\nvar slow = func() any {\n\tfmt.Println(\"handler started\")\n\ttime.Sleep(500 * time.Millisecond)\n\treturn \"done\"\n}\n"})
	cmd, base, logs := serve(t, root)
	result := make(chan string, 1)
	go func() {
		resp, err := http.Get(base + "/api/slow")
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
