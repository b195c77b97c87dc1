package host_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// taskFinish is one call of the finish callback.
type taskFinish struct {
	id     int64
	result any
	err    error
}

// taskSink records the finish callbacks of an application.
type taskSink struct {
	mu    sync.Mutex
	got   map[int64]taskFinish
	calls int
}

func newTaskSink() *taskSink { return &taskSink{got: map[int64]taskFinish{}} }

func (s *taskSink) finish(id int64, result any, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[id] = taskFinish{id, result, err}
	s.calls++
}

func (s *taskSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *taskSink) lookup(id int64) (taskFinish, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.got[id]
	return f, ok
}

// wait returns the finish of task id, failing the test if it does not
// come within a few seconds.
func (s *taskSink) wait(t *testing.T, id int64) taskFinish {
	t.Helper()
	var f taskFinish
	testutil.WaitFor(t, 15*time.Second, fmt.Sprintf("the finish of task %d", id), func() bool {
		var ok bool
		f, ok = s.lookup(id)
		return ok
	})
	return f
}

// taskApp is a served application with task workers that are this test
// binary started in the worker role.
type taskApp struct {
	*testApp
	sink *taskSink
}

func newTaskApp(t *testing.T, files map[string]string, workers int, coroutine bool, opts ...host.Option) *taskApp {
	t.Helper()
	sink := newTaskSink()
	opts = append([]host.Option{host.WithTaskWorkers(workers), host.WithTaskCoroutine(coroutine),
		host.WithConfig(func(c *host.Config) { c.WorkerCommand = testWorkerCommand })}, opts...)
	ta := newTestAppWith(t, files, func(a *host.App) { a.OnTaskFinish(sink.finish) }, opts...)
	if n := len(ta.app.Server().TaskWorkerPIDs()); n != workers {
		t.Fatalf("%d task workers running, want %d", n, workers)
	}
	return &taskApp{ta, sink}
}

// run dispatches a task and waits for its finish.
func (ta *taskApp) run(t *testing.T, handler string, args ...any) taskFinish {
	t.Helper()
	id, err := ta.app.Server().Task(host.Task{Handler: handler, Args: args})
	if err != nil {
		t.Fatalf("Task(%s): %v", handler, err)
	}
	return ta.sink.wait(t, id)
}

// pidOf runs task/pid.go and returns the pid of the worker that ran it.
func (ta *taskApp) pidOf(t *testing.T) int {
	t.Helper()
	f := ta.run(t, "/task/pid")
	n, ok := f.result.(int64)
	if f.err != nil || !ok {
		t.Fatalf("task/pid: %v %v", f.result, f.err)
	}
	return int(n)
}

func taskFile(name, imports, body string) string {
	if imports != "" {
		imports = "import (\n" + imports + "\n)\n"
	}
	return "//go:build ignore\n\npackage main\n\n" + imports + "\nvar " + name + " = " + body + "\n"
}

var taskPid = taskFile("pid", `"os"`, `func() any { return os.Getpid() }`)

// processGone reports whether pid no longer exists (it was reaped).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTaskDispatchFinish runs tasks in real worker processes and checks
// what reaches the finish callback: results converted from and to JSON,
// and task errors for everything that goes wrong inside a task.
func TestTaskDispatchFinish(t *testing.T) {
	t.Parallel()
	ta := newTaskApp(t, map[string]string{
		"task/pid.go": taskPid,
		"task/add.go": taskFile("add", "", `func(a, b int) any { return map[string]any{"sum": a + b} }`),
		"task/greet.go": taskFile("greet", `"errors"
	"strings"`, `func(name string, times int, tags ...string) (string, error) {
	if times < 0 {
		return "", errors.New("times must not be negative")
	}
	return strings.Repeat("hi "+name+" ", times) + strings.Join(tags, ","), nil
}`),
		"task/stats.go": taskFile("stats", "", `func(weights map[string]int, xs []float64, opt struct{ Scale float64 }) any {
	total := 0.0
	for _, x := range xs {
		total += x * opt.Scale
	}
	n := 0
	for _, w := range weights {
		n += w
	}
	return []any{total, n}
}`),
		"task/withctx.go": taskFile("withctx", `"context"
	"github.com/zealgo/zealgo/host"`, `func(ctx context.Context, n int, app *host.App) any {
	return map[string]any{"n": n, "ctx": ctx != nil && ctx.Err() == nil, "app": app != nil}
}`),
		"task/nothing.go": taskFile("nothing", "", `func() {}`),
		"task/nilable.go": taskFile("nilable", "", `func(p *int, x any, f func(), m map[string]int, s []int) any {
	return []bool{p == nil, x == nil, f == nil, m == nil, s == nil}
}`),
		"task/kinds.go": taskFile("kinds", `"fmt"`, `func(x any, m map[string]any, s []any) any {
	return fmt.Sprintf("%T %v | %T | %T %T", x, x, m["n"], s[0], s[1])
}`),
		"task/point.go": taskFile("point", "", `func(p struct{ X int }, ps []struct{ X int }) any { return p.X + len(ps) }`),
		"task/fan.go": taskFile("fan", `"time"`, `func(n int) any {
	ch := make(chan int)
	for i := 0; i < n; i++ {
		go func(k int) {
			time.Sleep(time.Millisecond)
			ch <- k * k
		}(i)
	}
	sum := 0
	for i := 0; i < n; i++ {
		sum += <-ch
	}
	return sum
}`),
		"task/fetch.go": taskFile("fetch", `"io"
	"net/http"`, `func(url string) (any, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return map[string]any{"status": resp.StatusCode, "body": string(b)}, err
}`),
		"api/hello.go":   "//go:build ignore\n\npackage main\n\nvar hello = func() any { return map[string]any{\"hello\": \"world\"} }\n",
		"task/fail.go":   taskFile("fail", `"errors"`, `func(msg string) error { return errors.New(msg) }`),
		"task/unenc.go":  taskFile("unenc", "", `func() any { return make(chan int) }`),
		"task/broken.go": taskFile("broken", "", `func() any { return undefinedThing }`),
		"task/novar.go":  "//go:build ignore\n\npackage main\n\nvar other = 1\n",
		"task/many.go":   taskFile("many", "", `func() (int, int, int) { return 1, 2, 3 }`),
		"api/dispatch.go": `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var dispatch = func(api *host.API) any {
	args, _ := api.Input["args"].([]any)
	id, err := api.App().Server().Task(host.Task{Handler: api.String("task"), Args: args})
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return map[string]any{"id": id}
}
`,
	}, 2, true)

	tests := []struct {
		name    string
		handler string
		args    []any
		want    string // the result as JSON
		kind    error  // or the kind of TaskError
		msg     string // in the error
	}{
		{"ints", "/task/add", []any{2, 40}, `{"sum":42}`, nil, ""},
		{"whole floats to ints", "/task/add", []any{2.0, 3.0}, `{"sum":5}`, nil, ""},
		{"variadic and (T, error)", "/task/greet", []any{"ann", 2, "a", "b"}, `"hi ann hi ann a,b"`, nil, ""},
		{"variadic empty", "/task/greet", []any{"bo", 1}, `"hi bo "`, nil, ""},
		{"maps, slices, structs", "/task/stats", []any{map[string]int{"a": 1, "b": 2}, []float64{1, 2.5}, map[string]any{"Scale": 2}}, `[7,3]`, nil, ""},
		{"injected context and app", "/task/withctx", []any{7}, `{"app":true,"ctx":true,"n":7}`, nil, ""},
		{"no result", "/task/nothing", nil, `null`, nil, ""},
		{"goroutines, channels, timers", "/task/fan", []any{10}, `285`, nil, ""},
		{"network I/O", "/task/fetch", []any{"http://127.0.0.1:1/unreachable"}, "", host.ErrTaskFailed, "connection refused"},
		{"returned error", "/task/greet", []any{"x", -1}, "", host.ErrTaskFailed, "times must not be negative"},
		{"error result", "/task/fail", []any{"disk full"}, "", host.ErrTaskFailed, "disk full"},
		{"fraction for an int", "/task/add", []any{1.5, 2}, "", host.ErrTaskArgs, "argument 1: cannot use JSON number 1.5 as int"},
		{"string for an int", "/task/add", []any{"2", 2}, "", host.ErrTaskArgs, "argument 1: cannot use JSON string as int"},
		{"too few arguments", "/task/add", []any{1}, "", host.ErrTaskArgs, "add takes 2 argument(s), got 1"},
		{"too many arguments", "/task/add", []any{1, 2, 3}, "", host.ErrTaskArgs, "add takes 2 argument(s), got 3"},
		{"too few for variadic", "/task/greet", []any{"x"}, "", host.ErrTaskArgs, "greet takes at least 2 argument(s), got 1"},
		{"bad variadic element", "/task/greet", []any{"x", 1, 5}, "", host.ErrTaskArgs, "argument 3: cannot use JSON number as string"},
		{"null for an int", "/task/add", []any{nil, 2}, "", host.ErrTaskArgs, "argument 1: cannot use JSON null as int"},
		{"null for the second int", "/task/add", []any{2, nil}, "", host.ErrTaskArgs, "argument 2: cannot use JSON null as int"},
		{"null for a string", "/task/greet", []any{nil, 1}, "", host.ErrTaskArgs, "argument 1: cannot use JSON null as string"},
		{"null variadic element", "/task/greet", []any{"x", 1, "a", nil}, "", host.ErrTaskArgs, "argument 4: cannot use JSON null as string"},
		{"null for a struct", "/task/point", []any{nil, nil}, "", host.ErrTaskArgs, "argument 1: cannot use JSON null as struct { X int }"},
		{"null for nilable types", "/task/nilable", []any{nil, nil, nil, nil, nil}, `[true,true,true,true,true]`, nil, ""},
		{"numbers in untyped arguments", "/task/kinds", []any{int64(1 << 60), map[string]any{"n": 7}, []any{1.5, 2}},
			`"int64 1152921504606846976 | int64 | float64 int64"`, nil, ""},
		{"array for a map of any", "/task/kinds", []any{1, []any{1}, []any{}}, "", host.ErrTaskArgs,
			"argument 2: cannot use JSON array as map[string]interface {}"},
		{"struct fields", "/task/point", []any{map[string]any{"X": 5}, []any{map[string]any{"x": 1}}}, `6`, nil, ""},
		{"unknown struct field", "/task/point", []any{map[string]any{"Y": 5}, nil}, "", host.ErrTaskArgs,
			`argument 1: cannot use JSON object with unknown field "Y" as struct { X int }`},
		{"unknown field in a slice of structs", "/task/point", []any{map[string]any{"X": 1}, []any{map[string]any{"X": 1, "Z": 2}}}, "", host.ErrTaskArgs,
			`argument 2: cannot use JSON object with unknown field "Z" as []struct { X int }`},
		{"unknown field beside known ones", "/task/stats", []any{nil, nil, map[string]any{"Scale": 1, "Offset": 2}}, "", host.ErrTaskArgs,
			`argument 3: cannot use JSON object with unknown field "Offset" as struct { Scale float64 }`},
		{"unencodable result", "/task/unenc", nil, "", host.ErrTaskResult, "JSON cannot encode"},
		{"compile error", "/task/broken", nil, "", host.ErrTaskLoad, "task/broken.go:"},
		{"no task func", "/task/novar", nil, "", host.ErrTaskLoad, "must declare var novar"},
		{"bad results", "/task/many", nil, "", host.ErrTaskLoad, "returns 3 results"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ta.run(t, tt.handler, tt.args...)
			if tt.kind == nil {
				if f.err != nil {
					t.Fatalf("error %v", f.err)
				}
				if got := toJSON(t, f.result); got != tt.want {
					t.Fatalf("result %s, want %s", got, tt.want)
				}
				return
			}
			var te *host.TaskError
			if !errors.Is(f.err, tt.kind) || !errors.As(f.err, &te) {
				t.Fatalf("error %v (result %v), want a TaskError of kind %v", f.err, f.result, tt.kind)
			}
			if te.ID != f.id || te.Handler != tt.handler || !strings.Contains(f.err.Error(), tt.msg) {
				t.Fatalf("error %q (id %d, handler %s), want one about %q", f.err, te.ID, te.Handler, tt.msg)
			}
			if f.result != nil {
				t.Fatalf("a failed task has the result %v", f.result)
			}
		})
	}

	// I/O: the task asks this server for a page.
	if f := ta.run(t, "/task/fetch", ta.srv.URL+"/api/hello"); f.err != nil || toJSON(t, f.result) != `{"body":"{\"hello\":\"world\"}","status":200}` {
		t.Fatalf("fetch: %v %v", f.result, f.err)
	}

	// From a handler, as an application dispatches.
	resp, err := http.Post(ta.srv.URL+"/api/dispatch", "application/json", strings.NewReader(`{"task":"/task/add","args":[20,22]}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		ID    int64
		Error string
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || body.ID == 0 {
		t.Fatalf("dispatch from a handler: %+v %v", body, err)
	}
	if f := ta.sink.wait(t, body.ID); f.err != nil || toJSON(t, f.result) != `{"sum":42}` {
		t.Fatalf("task dispatched by a handler: %v %v", f.result, f.err)
	}
	// Both workers served: least-loaded dispatch takes turns.
	pids := map[int]bool{}
	for i := 0; i < 4; i++ {
		pids[ta.pidOf(t)] = true
	}
	for _, pid := range ta.app.Server().TaskWorkerPIDs() {
		if !pids[pid] {
			t.Errorf("worker %d ran none of 4 tasks dispatched one after another (ran: %v)", pid, pids)
		}
	}
}

// TestTaskRefused checks what Server.Task refuses at once: an id of 0, an
// error, and nothing reaches the finish callback.
func TestTaskRefused(t *testing.T) {
	ta := newTaskApp(t, map[string]string{"task/pid.go": taskPid}, 1, true)
	tests := []struct {
		name    string
		handler string
		args    []any
		msg     string
		is      error
	}{
		{"outside task/", "/api/users", nil, "want /task/<name>", nil},
		{"no leading slash", "task/pid", nil, "want /task/<name>", nil},
		{"dot dot", "/task/../api/users", nil, "want /task/<name>", nil},
		{"nested", "/task/a/b", nil, "want /task/<name>", nil},
		{"empty name", "/task/", nil, "want /task/<name>", nil},
		{"with .go", "/task/pid.go", nil, "want /task/<name>", nil},
		{"encoded slash", "/task/a%2Fb", nil, "want /task/<name>", nil},
		{"no such file", "/task/nope", nil, "there is no file task/nope.go", fs.ErrNotExist},
		{"func argument", "/task/pid", []any{func() {}}, "arguments must be JSON-encodable", nil},
		{"channel argument", "/task/pid", []any{make(chan int)}, "arguments must be JSON-encodable", nil},
		{"too large", "/task/pid", []any{strings.Repeat("x", 65<<20)}, "the bound is", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := ta.app.Server().Task(host.Task{Handler: tt.handler, Args: tt.args})
			if err == nil || id != 0 || !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), "zealgo: ") {
				t.Fatalf("Task = %d, %v; want 0 and an error about %q", id, err, tt.msg)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v is not %v", err, tt.is)
			}
		})
	}
	// A task after them finishes, and it is the only callback.
	ta.pidOf(t)
	if n := ta.sink.count(); n != 1 {
		t.Fatalf("%d finish callbacks, want 1", n)
	}
}

// TestTaskNoWorkers: with TaskWorkerNum 0, dispatch returns
// ErrNoTaskWorkers and nothing else happens: no worker starts, no callback
// runs, whatever the task.
func TestTaskNoWorkers(t *testing.T) {
	var started atomic.Int64
	sink := newTaskSink()
	ta := newTestAppWith(t, map[string]string{
		"task/pid.go": taskPid,
		"api/go.go": `//go:build ignore

package main

import (
	"errors"

	"github.com/zealgo/zealgo/host"
)

var get = func(api *host.API) any {
	id, err := api.App().Server().Task(host.Task{Handler: "/task/pid"})
	return map[string]any{"id": id, "no_workers": errors.Is(err, host.ErrNoTaskWorkers)}
}
`,
	}, func(a *host.App) { a.OnTaskFinish(sink.finish) }, host.WithConfig(func(c *host.Config) {
		c.WorkerCommand = func() *exec.Cmd { started.Add(1); return testWorkerCommand() }
	}))
	resp, err := http.Get(ta.srv.URL + "/api/go")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"id":0,"no_workers":true}` {
		t.Fatalf("handler: %d %s", resp.StatusCode, body)
	}
	for _, h := range []string{"/task/pid", "/task/nope", "/not/a/task"} {
		if id, err := ta.app.Server().Task(host.Task{Handler: h, Args: []any{1}}); id != 0 || err != host.ErrNoTaskWorkers {
			t.Errorf("Task(%s) = %d, %v; want 0, ErrNoTaskWorkers", h, id, err)
		}
	}
	ta.app.Close() // runs any pending callback
	if n := started.Load(); n != 0 {
		t.Errorf("%d worker processes started", n)
	}
	if pids := ta.app.Server().TaskWorkerPIDs(); len(pids) != 0 {
		t.Errorf("workers %v", pids)
	}
	if n := sink.count(); n != 0 {
		t.Errorf("%d finish callbacks", n)
	}
}

// taskOverlap marks itself started and running in dir, then waits (up to
// waitMs) for want tasks to have started, and reports whether they did
// while it ran and the most tasks it saw running at once.
var taskOverlap = taskFile("overlap", `"fmt"
	"os"
	"path/filepath"
	"time"`, `func(dir string, id int, want int, waitMs int) any {
	run := filepath.Join(dir, "running", fmt.Sprint(id))
	if err := os.WriteFile(run, nil, 0o644); err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "started", fmt.Sprint(id)), nil, 0o644); err != nil {
		panic(err)
	}
	running, passed := 0, false
	deadline := time.Now().Add(time.Duration(waitMs) * time.Millisecond)
	for {
		started, _ := os.ReadDir(filepath.Join(dir, "started"))
		now, _ := os.ReadDir(filepath.Join(dir, "running"))
		if len(now) > running {
			running = len(now)
		}
		if len(started) >= want {
			passed = true
			break
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	os.Remove(run)
	return map[string]any{"passed": passed, "running": running, "pid": os.Getpid()}
}`)
