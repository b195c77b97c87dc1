package main

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// kindFile answers where its code runs: a type of the file has the
// package path of the compiled package (zealgo.build/...) only when the
// file runs compiled.
const kindFile = head + "import \"reflect\"\n\ntype probe struct{}\n\n" +
	"var kind = func(api *host.API) any {\n\treturn map[string]any{\"v\": %s, \"pkg\": reflect.TypeOf(probe{}).PkgPath()}\n}\n"

// modernFile uses what only compiled Go runs: range over an int, min,
// slices.Sort.
const modernFile = "//go:build ignore\n\npackage main\n\nimport (\n\t\"slices\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
	"var modern = func(api *host.API) any {\n\ts := []int{3, 1, 2}\n\tslices.Sort(s)\n\tn := 0\n" +
	"\tfor i := range 4 {\n\t\tn += i\n\t}\n\treturn map[string]any{\"sorted\": s, \"min\": min(s[2], s[1]), \"sum\": n}\n}\n"

// corpusFiles use what Yaegi lacks and compiled Go runs: maps.Keys and
// slices.Sorted, sync.OnceValue, a generic helper over a map type, clear,
// max; range over a func and over an int, min. Each is a handler file
// (named by its key) and the body it answers.
var corpusFiles = map[string]struct{ src, want string }{
	"corpus": {"//go:build ignore\n\npackage main\n\nimport (\n\t\"cmp\"\n\t\"maps\"\n\t\"slices\"\n\t\"sync\"\n\n" +
		"\t\"github.com/zealgo/zealgo/host\"\n)\n\nvar answer = sync.OnceValue(func() int { return 42 })\n\n" +
		"func sortedKeys[M ~map[K]V, K cmp.Ordered, V any](m M) []K { return slices.Sorted(maps.Keys(m)) }\n\n" +
		"var corpus = func(api *host.API) any {\n\tm := map[string]int{\"b\": 2, \"a\": 1, \"c\": 3}\n\tkeys := sortedKeys(m)\n" +
		"\tclear(m)\n\treturn map[string]any{\"keys\": keys, \"left\": len(m), \"once\": answer(), \"max\": max(3, 7)}\n}\n",
		`{"keys":["a","b","c"],"left":0,"max":7,"once":42}`},
	"rangefunc": {"//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n" +
		"func upTo(n int) func(func(int) bool) {\n\treturn func(yield func(int) bool) {\n\t\tfor i := range n {\n" +
		"\t\t\tif !yield(i) {\n\t\t\t\treturn\n\t\t\t}\n\t\t}\n\t}\n}\n\n" +
		"var rangefunc = func(api *host.API) any {\n\tsum := 0\n\tfor i := range upTo(5) {\n\t\tsum += i\n\t}\n" +
		"\treturn map[string]any{\"sum\": sum, \"min\": min(sum, 3)}\n}\n",
		`{"min":3,"sum":10}`},
}

// newTierApp writes a module application (zealgo new) with kindFile and
// modernFile.
func newTierApp(t *testing.T) string {
	work := t.TempDir()
	if out, errOut, code := runIn(t, work, goEnv, binary, "new", "tierapp"); code != 0 {
		t.Fatalf("zealgo new: exit %d\n%s%s", code, out, errOut)
	}
	app := filepath.Join(work, "tierapp")
	writeApp(t, app, "api/kind.go", strings.Replace(kindFile, "%s", "1", 1))
	writeApp(t, app, "api/modern.go", modernFile)
	return app
}

func writeApp(t *testing.T, app, rel, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(app, rel), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// serveTier starts serve in app with extra flags and env, and waits until
// it answers.
func serveTier(t *testing.T, app string, env []string, extra ...string) (string, *testutil.Buffer, func()) {
	t.Helper()
	addr := testutil.FreeAddr(t)
	logs := &testutil.Buffer{}
	cmd := exec.Command(binary, append([]string{"serve", "--addr", addr}, extra...)...)
	cmd.Dir, cmd.Stderr, cmd.Env = app, logs, append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	testutil.WaitFor(t, 20*time.Second, "the server", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr, logs, stop
}

// TestTieredServe: a module application served tiered answers
// interpreted at once (a file only compiled Go runs: 503 with
// Retry-After, and a build at once), switches to its native build, then
// answers an unchanged file from compiled code, the compiled-only file as
// compiled Go does, an edited file with its new version at once,
// interpreted, and the corpus files added meanwhile as compiled Go does
// once the next build is in; no request to another file fails under load
// across the switches; the native build's process warms its interpreter
// before it says it is ready. The metrics listener (--metrics-addr), which the
// supervisor holds, answers before and after the switch. zealgo check
// names the compiled-only files without failing; with --tiered=false it
// fails. The same build also covers a handler file importing a module
// the application requires (github.com/google/uuid), which the stock
// binary does not carry: it runs compiled only until the first build,
// then serves compiled; an edit of it then serves interpreted at once,
// through the symbol tables the build generated, with no 503 meanwhile
// (one application and its builds serve both, instead of a build each).
func TestTieredServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the application natively: minutes on a cold build cache")
	}
	// Mostly waiting on the native builds: it runs beside the package's
	// other parallel tests (the clusters', TestNewApplication), after its
	// sequential ones.
	t.Parallel()
	app := newTierApp(t)
	get := exec.Command("go", "get", "github.com/google/uuid@v1.6.0")
	get.Dir, get.Env = app, append(os.Environ(), goEnv...)
	if out, err := get.CombinedOutput(); err != nil {
		t.Fatalf("go get: %v\n%s", err, out)
	}
	writeApp(t, app, "api/id.go", strings.Replace(uuidFile, "%s", "1", 1))
	if _, errOut, code := runIn(t, app, nil, binary, "check"); code != 0 || !strings.Contains(errOut, "2 file(s) run compiled only") {
		t.Errorf("zealgo check: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runIn(t, app, nil, binary, "check", "--tiered=false"); code != 1 {
		t.Errorf("zealgo check --tiered=false: exit %d, want 1\n%s", code, errOut)
	}
	metrics := testutil.FreeAddr(t)
	base, logs, stop := serveTier(t, app, nil, "--tier-settle", "100ms", "--metrics-addr", metrics)
	if code, _, body := fetch(t, "GET", "http://"+metrics+"/metrics", "", ""); code != 200 || !strings.Contains(body, "zealgo_") {
		t.Errorf("GET /metrics before the switch: %d %.200s", code, body)
	}
	code, h, body := fetch(t, "GET", base+"/api/modern", "", "")
	if code != 503 || h.Get("Retry-After") == "" || !strings.Contains(body, `"error":"compiled_only"`) {
		t.Errorf("before the build, GET /api/modern: %d %v %s; want 503 compiled_only with Retry-After", code, h, body)
	}
	if code, _, body := fetch(t, "GET", base+"/api/id", "", ""); code != 503 || !strings.Contains(body, "compiled_only") {
		t.Errorf("before the build, GET /api/id: %d %s; want 503 compiled_only", code, body)
	}
	if _, _, body := fetch(t, "GET", base+"/api/kind", "", ""); body != `{"pkg":"","v":1}` {
		t.Errorf("interpreted GET /api/kind: %s", body)
	}
	load := startLoad(base + "/api/hello?name=Ada")
	testutil.WaitFor(t, 10*time.Minute, "the native build and the switch", func() bool {
		_, _, body := fetch(t, "GET", base+"/api/kind", "", "")
		return strings.Contains(body, "zealgo.build")
	})
	testutil.WaitFor(t, time.Minute, "the interpreting process to stop", func() bool {
		return strings.Contains(logs.String(), "supervisor: server process stopped")
	})
	if code, _, body := fetch(t, "GET", "http://"+metrics+"/metrics", "", ""); code != 200 || !strings.Contains(body, "zealgo_") {
		t.Errorf("GET /metrics from the native build: %d %.200s", code, body)
	} else {
		checkTierGCFloor(t, logs.String(), body)
	}
	if code, _, body := fetch(t, "GET", base+"/api/modern", "", ""); code != 200 || body != `{"min":2,"sorted":[1,2,3],"sum":6}` {
		t.Errorf("compiled GET /api/modern: %d %s", code, body)
	}
	if code, _, body := fetch(t, "GET", base+"/api/id", "", ""); code != 200 || body != `{"pkg":"zealgo.build/app/files/api/id_go","v":1,"ver":1}` {
		t.Errorf("compiled GET /api/id: %d %s", code, body)
	}
	writeApp(t, app, "api/kind.go", strings.Replace(kindFile, "%s", "2", 1))
	testutil.WaitFor(t, 5*time.Second, "the edit, interpreted", func() bool {
		_, _, body := fetch(t, "GET", base+"/api/kind", "", "")
		return body == `{"pkg":"","v":2}`
	})
	// The file importing uuid, edited, runs interpreted through the
	// symbol tables the build generated: no 503 meanwhile.
	writeApp(t, app, "api/id.go", strings.Replace(uuidFile, "%s", "2", 1))
	began := time.Now()
	testutil.WaitFor(t, 5*time.Second, "the edit of api/id.go, interpreted", func() bool {
		code, body, err := tryGet(base + "/api/id")
		if err == nil && code != 200 {
			t.Fatalf("GET /api/id after the edit: %d %s", code, body)
		}
		return body == `{"pkg":"","v":2,"ver":1}`
	})
	t.Logf("the edit of api/id.go served interpreted after %v", time.Since(began).Round(time.Millisecond))
	// The corpus of what Yaegi lacks, added to the running serve: each
	// file answers as compiled Go does once the next build includes it.
	for name, c := range corpusFiles {
		writeApp(t, app, "api/"+name+".go", c.src)
	}
	for name, c := range corpusFiles {
		testutil.WaitFor(t, 10*time.Minute, "the corpus file "+name+", compiled", func() bool {
			code, _, body := fetch(t, "GET", base+"/api/"+name, "", "")
			return code == 200 && body == c.want
		})
	}
	ok, failed := load.stop()
	if failed > 0 || ok < 10 {
		t.Errorf("under load across the switches: %d ok, %d failed (%s)", ok, failed, load.firstErr())
	}
	t.Logf("under load across the switches: %d ok, %d failed", ok, failed)
	stop()
	for _, w := range []string{"zealgo tier: build started", "zealgo build: compiling", "zealgo tier: build ready: switching to it",
		"supervisor: switching to a new server process", "zealgo tier: serving a native build", "the file runs compiled only until a native build includes it"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("the log lacks %q:\n%s", w, logs)
		}
	}
	// The native build's process warms its interpreter before it says it
	// is ready: the first save after the switch reloads as fast as the next.
	native := logs.String()[max(strings.Index(logs.String(), "zealgo tier: serving a native build"), 0):]
	warm, ready := strings.Index(native, "zealgo tier: interpreter ready for the next save"), strings.Index(native, "zealgo serving")
	if warm < 0 || ready < 0 || warm > ready || strings.Contains(native[warm:ready], "packages=0 ") {
		t.Errorf("the native build's process did not warm its interpreter before it was ready:\n%s", native)
	}
}

// checkTierGCFloor checks that the native build's process, which keeps
// its warmed interpreter's packages live, collects at a heap goal raised
// in proportion (host's tierGCFloor): its "interpreter ready" line names
// a GC floor at least 1.5 times the default 32 MiB (the interpreter's
// packages and setup.go's program take more than half of what the heap
// held before them), and its heap goal, from /metrics, is that floor.
func checkTierGCFloor(t *testing.T, logs, metrics string) {
	t.Helper()
	native := logs[max(strings.Index(logs, "zealgo tier: serving a native build"), 0):]
	line, _, _ := strings.Cut(native[max(strings.Index(native, "zealgo tier: interpreter ready for the next save"), 0):], "\n")
	_, v, _ := strings.Cut(line, "gc_floor=")
	v, _, _ = strings.Cut(v, " ")
	floor, err := strconv.ParseFloat(v, 64)
	if err != nil || floor < 48<<20 {
		t.Errorf("the native build's GC floor: %q; want at least 1.5 times the default 32 MiB:\n%s", v, line)
		return
	}
	var goal float64
	for l := range strings.Lines(metrics) {
		if v, ok := strings.CutPrefix(l, "go_memstats_next_gc_bytes "); ok {
			goal, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if goal < 0.9*floor {
		t.Errorf("the native build's heap goal: %.0f bytes; want its GC floor, %.0f", goal, floor)
	}
	t.Logf("the native build's GC floor: %.1f MiB (%s); heap goal %.1f MiB", floor/(1<<20), line, goal/(1<<20))
}

// TestTieredOff: --tiered=false, and serve without a Go toolchain on
// PATH, interpret only, as before tiered serve: a file only compiled Go
// runs is a compile error, and no build starts.
func TestTieredOff(t *testing.T) {
	app := newTierApp(t)
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		log  string
	}{
		{"flag", nil, []string{"--tiered=false"}, ""},
		{"no-go", []string{"PATH=" + t.TempDir()}, nil, "zealgo: serving interpreted only: no Go toolchain (go) on PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, logs, stop := serveTier(t, app, tc.env, append(tc.args, "--tier-settle", "1ms")...)
			code, _, body := fetch(t, "GET", base+"/api/modern", "", "")
			if code != 500 || !strings.Contains(body, "handler_compile_error") {
				t.Errorf("GET /api/modern: %d %s; want 500 handler_compile_error", code, body)
			}
			if _, _, body := fetch(t, "GET", base+"/api/kind", "", ""); body != `{"pkg":"","v":1}` {
				t.Errorf("GET /api/kind: %s", body)
			}
			stop()
			if !strings.Contains(logs.String(), tc.log) || strings.Contains(logs.String(), "build started") {
				t.Errorf("the log:\n%s", logs)
			}
		})
	}
}

// load sends GET requests one after another until stopped.
type load struct {
	done         chan struct{}
	wg           sync.WaitGroup
	ok, failed   atomic.Int64
	mu           sync.Mutex
	firstFailure string
}

func startLoad(url string) *load {
	l := &load{done: make(chan struct{})}
	for range 2 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.done:
					return
				default:
				}
				resp, err := http.Get(url)
				if err == nil {
					resp.Body.Close()
				}
				if err == nil && resp.StatusCode == 200 {
					l.ok.Add(1)
					continue
				}
				l.failed.Add(1)
				l.mu.Lock()
				if l.firstFailure == "" {
					l.firstFailure = describe(resp, err)
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

func describe(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

func (l *load) stop() (ok, failed int64) {
	close(l.done)
	l.wg.Wait()
	return l.ok.Load(), l.failed.Load()
}

func (l *load) firstErr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.firstFailure
}
