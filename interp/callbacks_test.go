package interp_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/interp"
)

// TestCallbackPanicRecovered: a panic in a func that interpreted code
// hands to compiled code which calls it on a goroutine of its own
// (time.AfterFunc, context.AfterFunc, sync.WaitGroup.Go) is recovered and
// reported instead of ending the process (without the guard, this test
// binary dies), and the funcs still run as Go's do.
func TestCallbackPanicRecovered(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"time.AfterFunc", `time.AfterFunc(time.Millisecond, func() { out <- "timer"; panic("in a timer") })`, "in a timer"},
		{"time.AfterFunc as a value", `af := time.AfterFunc; af(0, func() { out <- "value"; var m map[string]int; m["x"] = 1 })`,
			"assignment to entry in nil map"},
		{"time.AfterFunc with a named func", `time.AfterFunc(0, boom)`, "named"},
		{"context.AfterFunc", `ctx, cancel := context.WithCancel(context.Background())
	context.AfterFunc(ctx, func() { out <- "ctx"; panic("in a context callback") })
	cancel()`, "in a context callback"},
		{"sync.WaitGroup.Go", `var wg sync.WaitGroup
	wg.Go(func() { out <- "wg"; panic("in a wait group") })
	wg.Wait()`, "in a wait group"},
		{"sync.Once.Do inside a timer", `var once sync.Once
	time.AfterFunc(0, func() { once.Do(func() { out <- "once"; panic("in once") }) })`, "in once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `package main

import (
	"context"
	"sync"
	"time"
)

var _ = context.Background
var _ sync.Mutex

func boom() { out <- "named"; panic("named") }

var out = make(chan string, 10)

var run = func() chan string {
	` + tc.body + `
	return out
}
`
			reports := make(chan string, 10)
			prog, err := interp.CompileSource("cb.go", []byte(src), interp.Options{GoPanic: func(v any, stack []byte) {
				reports <- interp.DescribePanic(v)
			}})
			if err != nil {
				t.Fatal(err)
			}
			v, _ := prog.Var("run")
			out := v.Interface().(func() chan string)()
			select {
			case <-out:
			case <-time.After(10 * time.Second):
				t.Fatal("the callback did not run")
			}
			select {
			case got := <-reports:
				if !strings.Contains(got, tc.want) {
					t.Errorf("report %q, want %q", got, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no panic reported")
			}
		})
	}
}

// TestCallbackGuardKeepsBehaviour: the guarded functions still return what
// Go's do (a timer that stops, a stop func), and a sync.Once.Do panic
// still reaches its caller.
func TestCallbackGuardKeepsBehaviour(t *testing.T) {
	src := `package main

import (
	"context"
	"sync"
	"time"
)

var run = func() []bool {
	ran := make(chan bool, 1)
	tm := time.AfterFunc(time.Hour, func() { ran <- true })
	stopped := tm.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, func() { ran <- true })
	unregistered := stop()
	cancel()
	caught := false
	func() {
		defer func() { caught = recover() != nil }()
		var once sync.Once
		once.Do(func() { panic("to the caller") })
	}()
	var wg sync.WaitGroup
	n := 0
	wg.Go(func() { n = 1 })
	wg.Wait()
	return []bool{stopped, unregistered, caught, n == 1, len(ran) == 0}
}
`
	var mu sync.Mutex
	var reports []string
	prog, err := interp.CompileSource("keep.go", []byte(src), interp.Options{GoPanic: func(v any, stack []byte) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, interp.DescribePanic(v))
	}})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := prog.Var("run")
	got := v.Interface().(func() []bool)()
	for i, name := range []string{"timer stopped", "context callback unregistered", "Once.Do panic reached the caller", "WaitGroup.Go ran", "no callback ran"} {
		if !got[i] {
			t.Errorf("%s: false", name)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 0 {
		t.Errorf("reports %q", reports)
	}
}
