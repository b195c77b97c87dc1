package main

import (
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/bench/benchlib"
	"github.com/zealgo/zealgo/bench/libsym"
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// answer is what a benchmark endpoint answers: status, media type, and the
// body without a final newline (Echo's JSON encoder writes one, zealgo's
// does not).
type answer struct {
	status int
	media  string
	body   string
}

func fetch(t *testing.T, base, path string) answer {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return answer{resp.StatusCode, media, strings.TrimSuffix(string(b), "\n")}
}

// sameAnswer checks that path on other answers 200 as path on the bare Echo
// reference does (refPath; the same path when empty).
func sameAnswer(t *testing.T, ref, other, refPath, path string) {
	t.Helper()
	want := fetch(t, ref, refPath)
	got := fetch(t, other, path)
	if want.status != http.StatusOK || got != want {
		t.Errorf("%s: got %d %s %.300q, want (as Echo's %s) %d %s %.300q",
			path, got.status, got.media, got.body, refPath, want.status, want.media, want.body)
	}
}

// benchRoot writes the static file of scenario 3 under a new root's public/.
func benchRoot(t *testing.T) string {
	root := t.TempDir()
	var b strings.Builder
	for i := 0; i < 4096; i++ {
		if i%64 == 63 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(byte('a' + i%26))
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "public"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "public", "file4k.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestZealgoAnswersAsEcho: the benchmark's interpreted handlers (bench/app,
// served as zbench serves them) answer what their compiled twins in bare
// Echo answer, so that the benchmark compares the same work.
func TestZealgoAnswersAsEcho(t *testing.T) {
	ref := httptest.NewServer(newRef(benchRoot(t)))
	defer ref.Close()
	app := host.New(host.WithRoot("../../app"), host.WithDataDir(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	app.Symbols(libsym.Symbols)
	app.Provide(&benchlib.Records{})
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	z := httptest.NewServer(h)
	defer func() { z.Close(); app.Close() }()

	for _, c := range []struct{ refPath, path string }{
		{"/api/hello", "/api/hello"},
		{"/api/php/get?a=1&b=two", "/api/php/get?a=1&b=two"},
		{"/api/php/get?a=1&a=2&b=%3Cx%3E", "/api/php/get?a=1&a=2&b=%3Cx%3E"},
		{"/api/php/get?a=1&b=two", "/api/bench/gethelper?a=1&b=two"},
		{"/api/bench/work", "/api/bench/work"},
		{"/api/bench/work", "/api/bench/helper"},
	} {
		sameAnswer(t, ref.URL, z.URL, c.refPath, c.path)
	}
}

// TestNodeAnswersAsEcho: bench/ref/node/server.js, the raw Node server of
// the benchmark, answers every benchmark endpoint as bare Echo does.
func TestNodeAnswersAsEcho(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipping: node is not installed (apt-get install nodejs)")
	}
	track(t, "../../ref/node/server.js")
	root := benchRoot(t)
	ref := httptest.NewServer(newRef(root))
	defer ref.Close()
	addr := testutil.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	startPeer(t, addr, node, "../../ref/node/server.js", port, root)

	for _, path := range []string{
		"/api/hello",
		"/api/php/get?a=1&b=two",
		"/api/php/get?b=x+y&a=1&a=2",
		"/api/php/get",
		"/api/bench/work",
		"/file4k.txt",
	} {
		sameAnswer(t, ref.URL, "http://"+addr, path, path)
	}
	if got := fetch(t, "http://"+addr, "/../../etc/passwd"); got.status != http.StatusNotFound {
		t.Errorf("a path out of public/: got %d, want 404", got.status)
	}
}

// TestPHPAnswersAsEcho: the PHP scripts of bench/ref/php answer the JSON
// endpoints as bare Echo does. They run under PHP's built-in server here
// (nginx + PHP-FPM in bench/run.sh, which checks the same answers there),
// routed as bench/ref/nginx.conf routes them.
func TestPHPAnswersAsEcho(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Skip("skipping: php is not installed (apt-get install php-fpm brings php-cli)")
	}
	scripts, err := filepath.Abs("../../ref/php")
	if err != nil {
		t.Fatal(err)
	}
	track(t, filepath.Join(scripts, "hello.php"), filepath.Join(scripts, "get.php"), filepath.Join(scripts, "work.php"))
	router := filepath.Join(t.TempDir(), "router.php")
	err = os.WriteFile(router, []byte(`<?php
$scripts = ['/api/hello' => 'hello.php', '/api/php/get' => 'get.php', '/api/bench/work' => 'work.php'];
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if (!isset($scripts[$path])) { http_response_code(404); return; }
require '`+scripts+`/' . $scripts[$path];
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	ref := httptest.NewServer(newRef(benchRoot(t)))
	defer ref.Close()
	addr := testutil.FreeAddr(t)
	startPeer(t, addr, php, "-n", "-S", addr, router)

	for _, path := range []string{
		"/api/hello",
		"/api/php/get?a=1&b=two",
		"/api/php/get?b=x+y&a=1",
		"/api/php/get",
		"/api/bench/work",
	} {
		sameAnswer(t, ref.URL, "http://"+addr, path, path)
	}
}

// track reads files another process runs, so that go test's cache knows
// them: a changed script runs the test again.
func track(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
}

// startPeer runs the server name with args, its output on stderr, until
// the test ends, and waits until it listens on addr.
func startPeer(t *testing.T, addr, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitListen(t, addr)
}

func waitListen(t *testing.T, addr string) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, addr+" to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// TestShapesAnswerAsBare: the typed and full references answer every
// benchmark request as the bare one does, so that their rows in
// bench/RESULTS.md measure the same work; an unknown shape is refused.
func TestShapesAnswerAsBare(t *testing.T) {
	root := benchRoot(t)
	ref := httptest.NewServer(newRef(root))
	defer ref.Close()
	for _, shape := range []string{"typed", "full"} {
		e, err := newShape(shape, root)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(e)
		for _, path := range []string{"/api/hello", "/api/php/get?a=1&b=two", "/api/bench/work", "/file4k.txt"} {
			sameAnswer(t, ref.URL, srv.URL, path, path)
		}
		if shape == "full" {
			resp, err := http.Get(srv.URL + "/api/hello")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("X-Content-Type-Options") == "" {
				t.Errorf("full shape: no request id or secure headers: %v", resp.Header)
			}
		}
		srv.Close()
	}
	if _, err := newShape("fancy", root); err == nil {
		t.Error("an unknown shape was accepted")
	}
}
