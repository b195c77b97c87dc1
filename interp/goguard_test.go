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

// TestGoroutinePanicRecovered: a goroutine started by interpreted code
// that panics is recovered and reported, whatever form its go statement
// takes, and the go statements still behave as Go's: arguments evaluated
// when the statement runs, converted as for a direct call.
func TestGoroutinePanicRecovered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   string // the body of run(out chan string); it starts goroutines that send to out
		want   []string
		panics int // goroutines that panic
	}{
		{"func literal", `go func() { out <- "a"; var m map[string]int; m["x"] = 1 }()`, []string{"a"}, 1},
		{"func literal with args", `for i := 0; i < 3; i++ { go func(n int) { out <- fmt.Sprint(n); panic(n) }(i) }`,
			[]string{"0", "1", "2"}, 3},
		{"named func, args evaluated at the go statement", `for i := 0; i < 3; i++ { go work(out, i) }`,
			[]string{"0", "1", "2"}, 3},
		{"untyped constant converted", `go wide(out, 7)`, []string{"int64 7"}, 0},
		{"nil argument", `go maybe(out, nil)`, []string{"nil"}, 1},
		{"variadic", `go many(out, "x", "y")`, []string{"x+y"}, 0},
		{"method value", `var c counter; go c.send(out)`, []string{"method"}, 1},
		{"no panic", `go func(s string) { out <- s }("plain")`, []string{"plain"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `package main

import "fmt"

var _ = fmt.Sprint

func work(out chan string, n int) { out <- fmt.Sprint(n); var m map[int]int; m[n] = n }

func wide(out chan string, n int64) { out <- fmt.Sprintf("%T %d", n, n) }

func maybe(out chan string, p *int) { out <- fmt.Sprint(p == nil); panic("nil pointer given") }

func many(out chan string, s ...string) { out <- s[0] + "+" + s[1] }

type counter struct{}

func (counter) send(out chan string) { out <- "method"; panic("from a method") }

var run = func(out chan string) {
	` + tc.body + `
}
`
			src = strings.Replace(src, "fmt.Sprint(p == nil)", `map[bool]string{true: "nil", false: "set"}[p == nil]`, 1)
			var mu sync.Mutex
			var reports []string
			prog, err := interp.CompileSource("g.go", []byte(src), interp.Options{GoPanic: func(v any, stack []byte) {
				mu.Lock()
				defer mu.Unlock()
				reports = append(reports, interp.DescribePanic(v))
				if len(stack) == 0 {
					t.Error("no stack")
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			v, _ := prog.Var("run")
			run := v.Interface().(func(chan string))
			out := make(chan string, 10)
			run(out)
			var got []string
			for range tc.want {
				select {
				case s := <-out:
					got = append(got, s)
				case <-time.After(10 * time.Second):
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			testutil.Poll(10*time.Second, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(reports) >= tc.panics
			})
			mu.Lock()
			defer mu.Unlock()
			if len(reports) != tc.panics {
				t.Errorf("reports %q, want %d", reports, tc.panics)
			}
		})
	}
}

// TestGoroutineGuardKeepsLines: errors in a file with go statements still
// name the line as written.
func TestGoroutineGuardKeepsLines(t *testing.T) {
	src := "package main\n\nvar f = func() {\n\tgo func() {}()\n\tgo g(1)\n\treturn nope\n}\n\nfunc g(int) {}\n"
	_, err := interp.CompileSource("x.go", []byte(src), interp.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "x.go:6:") {
		t.Fatalf("err %v; want it at x.go:6", err)
	}
}
