package interp_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/interp"
)

// traceSrc panics on line 9, in lookup, called from line 17.
const traceSrc = `package main

import "strings"

var _ = strings.Repeat

func lookup(m map[string]int, k string) int {
	n := len(k)
	m[k] = n
	return n
}

var other = 3

var h = func() any {
	name := "x"
	return lookup(nil, name)
}
`

// callPanicking calls the func var name of prog and returns what it
// panicked with, split by interp.Recovered.
func callPanicking(t *testing.T, prog *interp.Program, name string) (any, []interp.Frame) {
	t.Helper()
	v, ok := prog.Var(name)
	if !ok {
		t.Fatalf("no var %s", name)
	}
	var p any
	func() {
		defer func() { p = recover() }()
		v.Interface().(func() any)()
	}()
	if p == nil {
		t.Fatalf("%s did not panic", name)
	}
	return interp.Recovered(p)
}

// TestTraceLines: a panic leaves the interpreter with the file:line of the
// statement each interpreted frame was running, innermost first, and
// nothing of the interpreter: Yaegi's own per-frame lines (the first
// statement of each function: 8:2 and 16:2 here) are not printed either.
func TestTraceLines(t *testing.T) {
	var stderr strings.Builder
	prog, err := interp.CompileSource("api/x.go", []byte(traceSrc), interp.Options{Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	v, frames := callPanicking(t, prog, "h")
	if got, want := fmt.Sprint(interp.FormatFrames(frames)), "[api/x.go:9 lookup api/x.go:17 h]"; got != want {
		t.Errorf("frames %s, want %s", got, want)
	}
	if d := interp.DescribePanic(v); d != "assignment to entry in nil map" {
		t.Errorf("value %q", d)
	}
	if stderr.Len() != 0 {
		t.Errorf("the interpreter printed %q", stderr.String())
	}
}

// TestTraceShapes: the frame names and lines of methods, func literals,
// else-if conditions, case bodies, one-line bodies, and panics raised in
// compiled code (whose compiled frame comes first, without reflect or the
// runtime).
func TestTraceShapes(t *testing.T) {
	src := `package main

import "strings"

type box struct{ m map[string]int }

func (b *box) put(k string) { b.m[k] = 1 }

func pick(n int) int {
	var xs []int
	if n == 0 {
		return 0
	} else if xs[n] > 1 {
		return 1
	}
	return 2
}

var method = func() any {
	var b box
	b.put("k")
	return nil
}

var literal = func() any {
	f := func(s string) string {
		return strings.Repeat(s, -1)
	}
	return f("x")
}

var elseif = func() any { return pick(1) }

var cases = func() any {
	switch x := 3; x {
	case 1:
		return 1
	case 3:
		var p *box
		return p.m
	}
	return nil
}

var oneline = func() any { var a []int; return a[5] }
`
	prog, err := interp.CompileSource("public/s.go", []byte(src), interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"method", "[public/s.go:7 (*box).put public/s.go:21 method]"},
		{"literal", "[strings/strings.go:LINE strings.Repeat public/s.go:27 literal.func1 public/s.go:29 literal]"},
		{"elseif", "[public/s.go:13 pick public/s.go:32 elseif]"},
		{"cases", "[public/s.go:40 cases]"},
		{"oneline", "[public/s.go:45 oneline]"},
	} {
		_, frames := callPanicking(t, prog, tc.name)
		got := fmt.Sprint(interp.FormatFrames(frames))
		if len(frames) > 0 && frames[0].Compiled {
			got = strings.Replace(got, fmt.Sprintf(":%d ", frames[0].Line), ":LINE ", 1)
		}
		if got != tc.want {
			t.Errorf("%s: frames %s, want %s", tc.name, got, tc.want)
		}
		for _, f := range frames {
			if strings.Contains(f.Func, "yaegi") || strings.HasPrefix(f.Func, "reflect.") || strings.HasPrefix(f.Func, "runtime.") {
				t.Errorf("%s: interpreter frame %v", tc.name, f)
			}
		}
	}
}

// TestTraceRecoverSeesValue: code of the file that recovers gets the value
// as it was panicked with (a type assertion on it works, as it does not
// with Yaegi's own recover), may panic again (the trace starts there:
// Yaegi skips the deferred calls that follow one that panics, so the frame
// of rethrow itself is missing), and a func literal made in a frame that
// panicked still works afterwards (Yaegi would hang at its end), as does
// deferring a func variable (which Yaegi deadlocks on).
func TestTraceRecoverSeesValue(t *testing.T) {
	src := `package main

import "fmt"

var saved func() int

func inner() { panic("deep") }

var caught = func() (out any) {
	defer func() {
		r := recover()
		s, ok := r.(string)
		out = fmt.Sprint(s, " ", ok)
	}()
	inner()
	return nil
}

var rethrow = func() any {
	x := 41
	saved = func() int { return x + 1 }
	defer func() {
		if r := recover(); r != nil {
			panic(fmt.Sprint("again: ", r))
		}
	}()
	inner()
	return nil
}

var callSaved = func() any { return saved() }

var deferVar = func() any {
	n := 0
	c := func() { n++ }
	defer c()
	return 1
}
`
	prog, err := interp.CompileSource("x.go", []byte(src), interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string) any {
		v, _ := prog.Var(name)
		done := make(chan any, 1)
		go func() { done <- v.Interface().(func() any)() }()
		select {
		case r := <-done:
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("%s hangs", name)
			return nil
		}
	}
	if got := call("caught"); got != "deep true" {
		t.Errorf("recover() gave %v, want the string deep", got)
	}
	v, frames := callPanicking(t, prog, "rethrow")
	if d := interp.DescribePanic(v); d != "again: deep" {
		t.Errorf("rethrown value %q", d)
	}
	if got := fmt.Sprint(interp.FormatFrames(frames)); got != "[x.go:24 rethrow.func2]" {
		t.Errorf("rethrown frames %s", got)
	}
	if got := call("callSaved"); got != 42 {
		t.Errorf("a func made in a frame that panicked gave %v, want 42", got)
	}
	if got := call("deferVar"); got != 1 {
		t.Errorf("deferVar gave %v", got)
	}
}

// TestTraceGoroutine: a goroutine's panic reaches Options.GoPanic with the
// goroutine's frames, whichever form its go statement takes.
func TestTraceGoroutine(t *testing.T) {
	src := `package main

func crash(n int) {
	var m map[int]int
	m[n] = n
}

var start = func() {
	go func() {
		var m map[string]int
		m["x"] = 1
	}()
	go crash(1)
	ys := []int{1}
	go func(xs ...int) {
		_ = xs[5]
	}(ys...)
}
`
	var mu sync.Mutex
	var got []string
	prog, err := interp.CompileSource("g.go", []byte(src), interp.Options{GoPanic: func(v any, _ []byte) {
		_, frames := interp.Recovered(v)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprint(interp.FormatFrames(frames)))
	}})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := prog.Var("start")
	v.Interface().(func())()
	testutil.Poll(10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 3
	})
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(got)
	if want := "[[g.go:11 start.func1] [g.go:16 start.func2] [g.go:5 crash]]"; fmt.Sprint(got) != want {
		t.Errorf("goroutine panics %q, want %s", got, want)
	}
}

// TestTraceKeepsColumns: a compile error is at the line and column as
// written, also on a line the rewrite added code to.
func TestTraceKeepsColumns(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"package main\n\nvar f = func() any { return nope }\n", "x.go:3:29: undefined: nope"},
		{"package main\n\nvar f = func() any {\n\tx := 1; return x + nope\n}\n", "x.go:4:21: undefined: nope"},
		{"package main\n\nfunc g() {}\n\nvar f = func() { go g(); go func() { _ = nope }() }\n", "x.go:5:42: undefined: nope"},
	} {
		_, err := interp.CompileSource("x.go", []byte(tc.src), interp.Options{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("err %v, want %s", err, tc.want)
		}
	}
}

// TestTraceGenericLeftAsWritten: a generic function still runs; a panic in
// it shows at the line of the call in its caller.
func TestTraceGenericLeftAsWritten(t *testing.T) {
	src := `package main

func first[T any](xs []T) T {
	return xs[0]
}

var ok = func() any { return first([]int{7}) }

var bad = func() any {
	var none []string
	return first(none)
}
`
	prog, err := interp.CompileSource("x.go", []byte(src), interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := prog.Var("ok")
	if got := v.Interface().(func() any)(); got != 7 {
		t.Errorf("first = %v", got)
	}
	_, frames := callPanicking(t, prog, "bad")
	if got := fmt.Sprint(interp.FormatFrames(frames)); got != "[x.go:11 bad]" {
		t.Errorf("frames %s", got)
	}
}

func panicsHere() {
	var xs []int
	_ = xs[len(xs)+1]
}

// TestPanicFrames: the frames of a panic of compiled code start where it
// panicked, without the runtime's.
func TestPanicFrames(t *testing.T) {
	var frames []interp.Frame
	func() {
		defer func() {
			recover()
			frames = interp.PanicFrames(0)
		}()
		panicsHere()
	}()
	if len(frames) < 2 || frames[0].Func != "interp_test.panicsHere" || !frames[0].Compiled ||
		!strings.HasPrefix(frames[1].Func, "interp_test.TestPanicFrames") {
		t.Fatalf("frames %v", interp.FormatFrames(frames))
	}
	if !strings.HasSuffix(frames[0].File, "interp/trace_test.go") {
		t.Errorf("file %s", frames[0].File)
	}
}
