package main

import (
	"bytes"
	"cmp"
	"errors"
	"go/format"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// runIn runs prog with args in dir, with env added to the environment.
func runIn(t *testing.T, dir string, env []string, prog string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
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

// goEnv is the environment of the go commands run on a new application:
// the shared module cache, go.mod and go.sum completed as needed, no
// workspace, and no $ZEALGO_SOURCE, so that zealgo new finds this checkout
// by itself.
var goEnv = []string{"GOFLAGS=-mod=mod", "GOWORK=off", "ZEALGO_SOURCE="}

func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"new", "full"}, 1, "zealgo: new: full is not empty (it holds main.go): give a new or empty directory\n"},
		{[]string{"new"}, 2, "zealgo: new: name the directory to write the application into\nusage: zealgo new DIR [--module PATH]\n"},
		{[]string{"new", "a", "b"}, 2, "zealgo: new: one directory only, not also \"b\"\n"},
		{[]string{"new", "a", "--module", "bad path"}, 2, "zealgo: new: module path: malformed module path \"bad path\": invalid char ' '\n"},
		{[]string{"new", "!!!"}, 2, "zealgo: new: no module path can be made from the name \"!!!\": give one with --module\n"},
	} {
		out, errOut, code := runIn(t, dir, goEnv, binary, tc.args...)
		if code != tc.code || !strings.HasPrefix(errOut, tc.want) || out != "" {
			t.Errorf("zealgo %s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, out, errOut, tc.code, tc.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("refused commands left %d entries in %s", len(entries), dir)
	}
	if b, _ := os.ReadFile(filepath.Join(full, "main.go")); string(b) != "package main\n" {
		t.Errorf("main.go changed: %q", b)
	}
}

// TestNewWithoutGo: with no go command on the PATH, zealgo new writes the
// application and says what to run once Go is installed.
func TestNewWithoutGo(t *testing.T) {
	work := t.TempDir()
	out, errOut, code := runIn(t, work, []string{"PATH=" + t.TempDir()}, binary, "new", "shop", "--module", "example.org/shop")
	if code != 0 || !strings.Contains(out, "no go command found: install Go 1.") || !strings.Contains(out, "run `go mod tidy` in shop") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if gomod := readApp(t, filepath.Join(work, "shop"), "go.mod"); !strings.HasPrefix(gomod, "module example.org/shop\n") {
		t.Errorf("go.mod:\n%s", gomod)
	}
	if _, err := os.Stat(filepath.Join(work, "shop", "go.sum")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("go.sum without go: %v", err)
	}
}

// TestNewApplication is the end-to-end test of zealgo new: the binary
// built from this checkout writes an application, which it then serves
// from its directory with a task worker (every endpoint, the page, the
// stylesheet; the task runs and logs its result), checks, lists and
// migrates; the application's own go vet, go build and go test pass, and
// each handler file type-checks on its own, as gopls checks it.
func TestNewApplication(t *testing.T) {
	t.Parallel() // builds and runs the new application's own go commands: beside the waiting tests
	work := t.TempDir()
	out, errOut, code := runIn(t, work, goEnv, binary, "new", "blog")
	if code != 0 {
		t.Fatalf("zealgo new: exit %d\n%s%s", code, out, errOut)
	}
	app := filepath.Join(work, "blog")
	checkout, _ := filepath.Abs("../..")
	if !strings.Contains(out, "zealgo: wrote example.com/blog into blog") || !strings.Contains(out, "from the checkout "+checkout) {
		t.Errorf("zealgo new printed %q", out)
	}
	gomod := readApp(t, app, "go.mod")
	for _, w := range []string{"module example.com/blog\n", "\ngo 1.", "github.com/zealgo/zealgo v0.0.0-00010101000000-000000000000",
		"replace github.com/zealgo/zealgo => " + checkout + "\n"} {
		if !strings.Contains(gomod, w) {
			t.Errorf("go.mod lacks %q:\n%s", w, gomod)
		}
	}
	// Echo v4 and echo-contrib left zealgo's module graph (issue 26).
	for _, old := range []string{"/echo/v4 ", "/echo-contrib ", "gorilla/context"} {
		if strings.Contains(gomod, old) {
			t.Errorf("go.mod lists %s:\n%s", old, gomod)
		}
	}
	if _, err := os.Stat(filepath.Join(app, "go.sum")); err != nil {
		t.Errorf("go mod tidy wrote no go.sum: %v", err)
	}
	if got := readApp(t, app, ".gitignore"); got != "data/\n" {
		t.Errorf(".gitignore: %q", got)
	}

	serveNew(t, app)

	if out, errOut, code := runIn(t, app, nil, binary, "check"); code != 0 || out != "" || !strings.Contains(errOut, "zealgo check: 6 file(s) ok") /* 5 Go files and template/index.html */ {
		t.Errorf("zealgo check: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runIn(t, app, nil, binary, "routes")
	flat := strings.Join(strings.Fields(out), " ")
	for _, w := range []string{
		"/api/hello GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS api/hello.go mode 1 (hello)",
		"/api/notes GET, HEAD, POST, OPTIONS api/notes.go mode 2 (per method)",
		"/ GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS public/index.go mode 1 (index)",
	} {
		if code != 0 || !strings.Contains(flat, w) {
			t.Errorf("zealgo routes (exit %d) lacks %q:\n%s%s", code, w, out, errOut)
		}
	}
	out, errOut, code = runIn(t, app, nil, binary, "migrate", "--data", filepath.Join(work, "fresh"))
	if code != 0 || !strings.Contains(out+errOut, "001_notes.sql") {
		t.Errorf("zealgo migrate on a fresh database: exit %d\n%s%s", code, out, errOut)
	}

	goChecks(t, app)
	built(t, app)
}

// built builds the application with `zealgo build --embed` (cmd/zealgo's
// main, every handler, page and task file compiled, the templates, static
// files and migrations embedded), removes all of them from the
// application's directory, and serves the same requests as serveNew with
// the binary: it answers them from what it compiled and embedded.
func built(t *testing.T, app string) {
	bin := filepath.Join(t.TempDir(), "blog")
	if out, errOut, code := runIn(t, app, nil, binary, "build", "--embed", "-o", bin); code != 0 {
		t.Fatalf("zealgo build: exit %d\n%s%s", code, out, errOut)
	}
	if got := readApp(t, app, ".zealgo/.gitignore"); !strings.Contains(got, "\n*\n") {
		t.Errorf(".zealgo/.gitignore: %q", got)
	}
	css := readApp(t, app, "public/css/style.css")
	for _, p := range []string{"api", "task", "public", "lib", "template", "migrations"} {
		if err := os.RemoveAll(filepath.Join(app, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(app, "data")); err != nil {
		t.Fatal(err)
	}
	logs := serveApp(t, app, bin, css)
	for _, w := range []string{`"zealgo: handler, page and task files compiled into the binary" files=5`,
		`"zealgo: templates, static files and migrations embedded in the binary"`, "msg=migrated file=migrations/001_notes.sql"} {
		if !strings.Contains(logs, w) {
			t.Errorf("the built application's log lacks %s:\n%s", w, logs)
		}
	}
}

// serveNew serves the new application with `zealgo serve` run in its
// directory, requests every endpoint, the page and the stylesheet, waits
// for the task's result in the log, and stops the server with SIGTERM.
func serveNew(t *testing.T, app string) {
	serveApp(t, app, binary, readApp(t, app, "public/css/style.css"))
}

// serveApp is serveNew with the program prog (zealgo, or the application
// built by zealgo build) and the stylesheet it must send, and returns the
// server's log.
func serveApp(t *testing.T, app, prog, css string) string {
	addr := testutil.FreeAddr(t)
	logs := &testutil.Buffer{}
	cmd := exec.Command(prog, "serve", "--addr", addr, "--task-workers", "1", "--tiered=false") // tier_test.go tests tiered serve
	cmd.Dir, cmd.Stderr = app, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	testutil.WaitFor(t, 15*time.Second, "the server and its task worker", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil && strings.Contains(logs.String(), `msg="task workers started" workers=1`)
	})
	base := "http://" + addr
	for _, tc := range []struct {
		method, path, ctype, body string
		code                      int
		want                      string // the body, or a substring with a leading "~"
		header                    string // "Name: value" the response must have
	}{
		{"GET", "/api/hello?name=Ada", "", "", 200, `{"hello":"Ada","method":"GET"}`, "Content-Type: application/json"},
		{"GET", "/api/hello", "", "", 200, `{"hello":"world","method":"GET"}`, "Referrer-Policy: strict-origin-when-cross-origin"}, // setup.go
		{"DELETE", "/api/hello", "", "", 200, `{"hello":"world","method":"DELETE"}`, ""},
		{"GET", "/api/notes", "", "", 200, `{"notes":[]}`, "Content-Type: application/json"},
		{"POST", "/api/notes", "application/json", `{"title":"first"}`, 201, `{"id":1,"title":"first"}`, ""},
		{"POST", "/api/notes", "application/json", `{"title":" "}`, 400, `{"error":"invalid_title","hint":"a note needs a title"}`, ""},
		{"PUT", "/api/notes", "", "", 405, `~"error":"method_not_allowed"`, "Allow: GET, HEAD, POST, OPTIONS"},
		{"GET", "/api/notes", "", "", 200, `{"notes":[{"id":1,"title":"first"}]}`, ""},
		{"GET", "/", "", "", 200, "~<li>first</li>", "Content-Type: text/html; charset=utf-8"},
		{"GET", "/css/style.css", "", "", 200, css, "Content-Type: text/css; charset=utf-8"},
	} {
		code, h, body := fetch(t, tc.method, base+tc.path, tc.ctype, tc.body)
		sub, isSub := strings.CutPrefix(tc.want, "~")
		name, value, _ := strings.Cut(tc.header, ": ")
		if code != tc.code || (isSub && !strings.Contains(body, sub)) || (!isSub && body != tc.want) || (name != "" && h.Get(name) != value) {
			t.Errorf("%s %s: %d %v %q; want %d, %q, %s", tc.method, tc.path, code, h, body, tc.code, tc.want, tc.header)
		}
	}
	// A browser's form: 303 back to the page, which shows the note escaped.
	form, _ := http.NewRequest("POST", base+"/api/notes", strings.NewReader("title="+url.QueryEscape("<b>x</b>")))
	form.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	form.Header.Set("Accept", "text/html")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/" {
		t.Errorf("form post: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, _, body := fetch(t, "GET", base+"/", "", ""); !strings.Contains(body, "<li>&lt;b&gt;x&lt;/b&gt;</li>\n<li>first</li>") {
		t.Errorf("the page after the form:\n%s", body)
	}
	// Each POST dispatched one tally; they run concurrently in the worker,
	// so the first may already count the second note. Their ids come from
	// the queue (NATS JetStream, embedded by default), in dispatch order.
	tally := regexp.MustCompile(`msg="task finished" id=(\d+) task=/task/tally result="\{\\"notes\\":(\d)\}"`)
	var ends [][]string
	testutil.WaitFor(t, 15*time.Second, "the results of the 2 tasks", func() bool {
		ends = tally.FindAllStringSubmatch(logs.String(), -1)
		return len(ends) >= 2
	})
	slices.SortFunc(ends, func(a, b []string) int {
		x, _ := strconv.ParseInt(a[1], 10, 64)
		y, _ := strconv.ParseInt(b[1], 10, 64)
		return cmp.Compare(x, y)
	})
	if len(ends) != 2 || (ends[0][2] != "1" && ends[0][2] != "2") || ends[1][2] != "2" {
		t.Errorf("tally results (id, notes) %q, want two, the first counting 1 or 2 notes, the second 2", ends)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(logs.String(), "zealgo stopped") {
		t.Fatalf("serve exit %v; log:\n%s", err, logs)
	}
	if strings.Contains(logs.String(), "level=ERROR") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("serve logged a problem:\n%s", logs)
	}
	return logs.String()
}

// goChecks runs the application's own go vet, go build and go test, type-
// checks each handler, page and task file alone (go vet FILE, as gopls
// checks a //go:build ignore file), and checks gofmt.
func goChecks(t *testing.T, app string) {
	for _, args := range [][]string{{"vet", "./..."}, {"build", "./..."}, {"test", "-count=1", "./..."}} {
		out, errOut, code := runIn(t, app, goEnv, "go", args...)
		if code != 0 {
			t.Errorf("go %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		if args[0] == "test" && !strings.Contains(out, "ok  \texample.com/blog\t") {
			t.Errorf("go test ran no golden test:\n%s", out)
		}
	}
	var handlers []string
	err := filepath.WalkDir(app, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if f, err := format.Source(b); err != nil || !bytes.Equal(f, b) {
			t.Errorf("%s is not gofmt-formatted (%v)", p, err)
		}
		if rel, _ := filepath.Rel(app, p); bytes.HasPrefix(b, []byte("//go:build ignore\n")) {
			handlers = append(handlers, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(handlers) != 5 {
		t.Errorf("handler, page, task files and setup.go: %v, want 5", handlers)
	}
	for _, h := range handlers {
		if out, errOut, code := runIn(t, app, goEnv, "go", "vet", h); code != 0 {
			t.Errorf("go vet %s: exit %d\n%s%s", h, code, out, errOut)
		}
	}
}

func readApp(t *testing.T, app, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(app, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
