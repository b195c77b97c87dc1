package interp_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/interp"
)

// TestCompileExplainsFailures: where Yaegi fails without a position or
// with its own words, the compile error is package check's, with the
// file's position: an undefined package name (a file that forgot to import
// host panicked inside Yaegi), a name the interpreter's standard library
// lacks, a builtin hidden by a handler.
func TestCompileExplainsFailures(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"undefined package", "package main\n\nvar f = func(api *host.API) any { return 1 }\n",
			"x.go:3:19: undefined: host"},
		{"missing symbol", "package main\n\nimport \"sync\"\n\nvar v = sync.OnceValue(func() int { return 1 })\n",
			"x.go:5:9: sync.OnceValue is not available in interpreted files; use a sync.Once and a variable: once.Do(func() { v = compute() })"},
		{"package not linked", "package main\n\nimport \"os/exec\"\n\nvar f = func() any { return exec.Command(\"true\") }\n",
			"x.go:3:8: package os/exec is not available in interpreted files: interpreted files cannot start processes; " +
				"run the command from compiled code (a package of the application whose symbols it registers with app.Symbols)"},
		{"hidden builtin", "package main\n\nvar m = map[string]int{}\n\nvar delete = func() any { delete(m, \"k\"); return m }\n",
			"x.go:5:27: delete(...) here calls var delete (the DELETE handler, line 5), which hides the builtin delete in this file: " +
				"remove map keys with maps.DeleteFunc(m, func(k K, _ V) bool { return k == key }) instead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := interp.CompileSource("x.go", []byte(tc.src), interp.Options{})
			var ce *interp.Error
			if !errors.As(err, &ce) || ce.Error() != tc.want {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestCompileFixes: the traps the host fixes run as Go would, from the
// compile alone (the corpus under check/testdata/traps shows each through
// the server).
func TestCompileFixes(t *testing.T) {
	src := `package main

import (
	"encoding/json"
	"errors"
	"fmt"
)

type secret struct {
	Name string
	pass string
}

type denied struct{ who string }

func (d *denied) Error() string { return "denied: " + d.who }

func isEmpty(s string) any { return s == "" }

func pair[T, U any](x T, f func(T) U) U { return f(x) }

var f = func() string {
	b, _ := json.Marshal(secret{"ada", "pw"})
	err := fmt.Errorf("login: %w", &denied{"bob"})
	var d *denied
	as := errors.As(err, &d)
	var fs []func() int
	for _, n := range []int{1, 2} {
		fs = append(fs, func() int { return n })
	}
	return fmt.Sprint(string(b), " ", err, " ", as && d.who == "bob", " ", isEmpty(""),
		" ", pair(2, func(i int) string { return fmt.Sprint(i * 2) }), " ", fs[0](), fs[1]())
}
`
	var warnings []string
	p, err := interp.CompileSource("x.go", []byte(src), interp.Options{Warn: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := p.Var("f")
	want := `{"Name":"ada"} login: denied: bob true true 4 1 2`
	if got := v.Interface().(func() string)(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "x.go:1:1: the file lacks //go:build ignore") {
		t.Fatalf("warnings %q", warnings)
	}
}

// TestBrokenGenerics keeps the list of generic funcs of the standard
// library that check reports as unavailable true to Yaegi: each fails even
// with its type arguments written out (when its source changes, the list
// in check/missing.go must too), while their neighbours run.
func TestBrokenGenerics(t *testing.T) {
	broken := []string{
		`slices.Delete[[]int, int](s, 0, 1)`,
		`slices.DeleteFunc[[]int, int](s, func(x int) bool { return x == 1 })`,
		`slices.Replace[[]int, int](s, 0, 1, 9)`,
		`slices.Compact[[]int, int](s)`,
		`slices.CompactFunc[[]int, int](s, func(a, b int) bool { return a == b })`,
		`slices.Concat[[]int, int](s, s)`,
		`maps.Clone[map[string]int, string, int](m)`,
	}
	working := []string{
		`slices.Clone[[]int, int](s)`,
		`slices.Insert[[]int, int](s, 0, 7)`,
		`slices.Index(s, 2)`,
		`maps.Equal[map[string]int, map[string]int, string, int](m, m)`,
	}
	run := func(call string) (string, error) {
		src := fmt.Sprintf(`package main

import (
	"fmt"
	"maps"
	"slices"
)

var f = func() (out string) {
	defer func() {
		if p := recover(); p != nil {
			out = "panic"
		}
	}()
	s, m := []int{1, 2, 2}, map[string]int{"a": 1}
	return fmt.Sprint(%s)
}
`, call)
		p, err := interp.CompileSource("x.go", []byte(src), interp.Options{})
		if err != nil {
			return "", err
		}
		v, _ := p.Var("f")
		return v.Interface().(func() string)(), nil
	}
	for _, call := range broken {
		if out, err := run(call); err == nil && out != "panic" {
			t.Errorf("%s now runs (%s): take it off check's list", call, out)
		}
	}
	for _, call := range working {
		if out, err := run(call); err != nil || out == "panic" {
			t.Errorf("%s: %v %s", call, err, out)
		}
	}
}
