package main

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/buildgen"
	"github.com/zealgo/zealgo/internal/testutil"
)

// TestSampleCompiled runs the sample's HTTP tests, its golden archive and
// its browser tests again on the repository's handler, page and task
// files compiled by the Go compiler, as `zealgo build` compiles them: an
// overlay of this package (buildgen.Options.Overlay) links them into a
// second test binary, where the host serves from the compiled registry.
// Left out: the tests that build or run the sample's binary themselves
// (container, durability: TestSampleBuilt below runs the built binary),
// and `check`, which interprets.
func TestSampleCompiled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sample's tests a second time")
	}
	t.Parallel() // with the other tests that build: their builds and waits overlap
	tmp := t.TempDir()
	overlay := filepath.Join(tmp, "overlay.json")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	_, err := buildgen.Build(ctx, buildgen.Options{Root: "..", Dir: filepath.Join(tmp, "gen"),
		Overlay: overlay, TestDir: ".", TestPackage: "main", Stderr: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	skip := "^(TestSampleCompiled|TestSampleBuilt|TestContainerRecipe|TestSampleDurability|TestSampleCheck)$"
	cmd := exec.CommandContext(ctx, "go", "test", "-overlay", overlay, "-vet=off", "-count=1", "-v", "-skip", skip, ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the sample's tests on compiled handlers: %v\n%s", err, got)
	}
	if !strings.Contains(string(got), "--- PASS: TestZealgoCompiledRegistry") || !strings.Contains(string(got), "--- PASS: TestSampleNotesAPI") || !strings.Contains(string(got), "--- PASS: TestGolden") {
		t.Fatalf("the compiled run did not run the sample's tests:\n%s", got)
	}
	t.Logf("%s", got)
}

// TestSampleBuilt builds the sample as `go run ./sample build` does and
// serves, with that binary, a root holding only the templates and static
// files, with a task worker: the accounts, notes, pages and a task answer
// as interpreted, with no handler source to interpret.
func TestSampleBuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sample")
	}
	t.Parallel()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "sample")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	genMu.Lock() // shares its generated packages with TestContainerRecipe's build (build_test.go)
	_, err := buildgen.Build(ctx, buildgen.Options{Root: "..", Main: "github.com/zealgo/zealgo/sample",
		Dir: genDir(), Out: bin, Stderr: &out})
	genMu.Unlock()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	root := filepath.Join(tmp, "root")
	copyAssets(t, "..", root)
	addr := testutil.FreeAddr(t)
	log := &testutil.Buffer{}
	cmd := exec.Command(bin, "serve", "--root", root, "--addr", addr, "--data", filepath.Join(tmp, "data"),
		"--supervise=false", "--task-workers", "1")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("log:\n%s", log.String())
		}
	})
	jar, _ := cookiejar.New(nil)
	c := &client{t: t, base: "http://" + addr, jar: jar, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	testutil.WaitFor(t, 30*time.Second, "the built sample to answer", func() bool {
		resp, err := http.Get(c.base + "/api/learn/notes")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized
	})
	c.register("built", "correct horse")
	note := c.addNote("compiled", "no interpreter")
	if r := c.do("GET", noteURL(note["id"]), nil); r.Status != http.StatusOK || !strings.Contains(r.Body, `"no interpreter"`) {
		t.Errorf("GET the note: %d %s", r.Status, r.Body)
	}
	checkLiveBuilt(t, c)
	if r := c.do("OPTIONS", "/api/learn/notes", nil); r.Status != http.StatusNoContent || r.Header.Get("Allow") != "GET, HEAD, POST, PUT, DELETE, OPTIONS" {
		t.Errorf("OPTIONS: %d Allow %q", r.Status, r.Header.Get("Allow"))
	}
	if r := c.do("GET", "/about", nil); r.Status != http.StatusOK || !strings.Contains(r.Body, "<!doctype html>") {
		t.Errorf("GET /about: %d %.200s", r.Status, r.Body)
	}
	if r := c.do("GET", "/api/php/get?a=1&b=two", nil); r.Status != http.StatusOK || !strings.Contains(r.Body, `"b":"two"`) {
		t.Errorf("GET /api/php/get: %d %s", r.Status, r.Body)
	}
	if r := c.json("POST", "/api/tasks/report", map[string]any{"title": "built", "values": []int{1, 2, 3}}); r.Status != http.StatusAccepted {
		t.Errorf("POST /api/tasks/report: %d %s", r.Status, r.Body)
	}
	testutil.WaitFor(t, 30*time.Second, "the task's result in the log", func() bool {
		return strings.Contains(log.String(), "task finished") && strings.Contains(log.String(), `\"mean\":2`)
	})
	if !strings.Contains(log.String(), "compiled into the binary") {
		t.Errorf("the binary does not say it serves compiled files:\n%s", log.String())
	}
}

// copyAssets copies the templates and the static files of the root at src
// (every file under template/ and public/ but the page .go files) to dst.
func copyAssets(t *testing.T, src, dst string) {
	t.Helper()
	for _, dir := range []string{"template", "public"} {
		err := filepath.WalkDir(filepath.Join(src, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, ".go") {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
