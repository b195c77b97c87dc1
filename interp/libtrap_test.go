package interp_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/interp"
)

// The lib trap corpus of issue 29: what a handler file may not do under
// the interpreter, done in an application package instead.
const (
	libAnyMethods = `package shape

type Point struct{ X, Y int }

func (p Point) Sum() int { return p.X + p.Y }

// Doc puts a value with a method inside a map[string]any.
func Doc() map[string]any {
	return map[string]any{"p": Point{1, 2}, "list": []any{Point{3, 4}}}
}
`
	libRangeInt = `package count

// Squares ranges over an int.
func Squares(n int) []int {
	var out []int
	for i := range n {
		out = append(out, i*i)
	}
	return out
}
`
	libGeneric = `package gen

// Map is a Go 1.21+ generic helper.
func Map[S ~[]E, E any, R any](s S, f func(E) R) []R {
	out := make([]R, 0, len(s))
	for _, v := range s {
		out = append(out, f(v))
	}
	return out
}
`
)

// TestLibAnyMethodsFixed: a struct with a method put in a map[string]any
// by an application package encodes as compiled Go encodes it: the
// package's source gets the any-methods rewrite of handler files.
func TestLibAnyMethodsFixed(t *testing.T) {
	m := blogModule(t, map[string]string{"lib/shape/shape.go": libAnyMethods})
	src := "package main\n\nimport (\n\t\"encoding/json\"\n\n\t\"example.com/blog/lib/shape\"\n)\n\n" +
		"var f = func() any { b, _ := json.Marshal(shape.Doc()); return string(b) }\n"
	got := call(t, m, src, interp.Options{})
	want, _ := json.Marshal(map[string]any{"p": struct{ X, Y int }{1, 2}, "list": []any{struct{ X, Y int }{3, 4}}})
	if got != string(want) {
		t.Fatalf("interpreted %s, compiled Go %s", got, want)
	}
}

// TestLibTrapsNamed: check names every trap of the application packages
// at once, each at its package file's position, and a compile that falls
// into one says where.
func TestLibTrapsNamed(t *testing.T) {
	m := blogModule(t, map[string]string{"lib/count/count.go": libRangeInt, "lib/gen/gen.go": libGeneric})
	src := "package main\n\nimport (\n\t\"example.com/blog/lib/count\"\n\t\"example.com/blog/lib/gen\"\n)\n\n" +
		"var f = func() any { return gen.Map(count.Squares(3), func(i int) int { return i + 1 }) }\n"
	res := interp.CheckFile("api/x.go", []byte(src), interp.Options{Module: m})
	var lines []string
	for _, d := range res.Diagnostics {
		lines = append(lines, d.String()+" ["+d.Rule+"]")
	}
	all := strings.Join(lines, "\n")
	t.Logf("check:\n%s", all)
	if !strings.Contains(all, "lib/count/count.go:6:2: range over an int") {
		t.Errorf("check does not name the range over an int at lib/count/count.go:6:2:\n%s", all)
	}
	_, err := interp.CompileSource("api/x.go", []byte(src), interp.Options{Module: m})
	t.Logf("compile: %v", err)
	if err == nil || !strings.Contains(err.Error(), "lib/count/count.go:6:2") {
		t.Errorf("compile error %v does not name lib/count/count.go:6:2", err)
	}
}

// TestLibGeneric: a Go 1.21+ generic helper of an application package
// answers as built, or check names it at its package file's position.
func TestLibGeneric(t *testing.T) {
	m := blogModule(t, map[string]string{"lib/gen/gen.go": libGeneric})
	src := "package main\n\nimport \"example.com/blog/lib/gen\"\n\n" +
		"var f = func() any { return gen.Map([]int{1, 2}, func(i int) int { return i + 1 }) }\n"
	res := interp.CheckFile("api/x.go", []byte(src), interp.Options{Module: m})
	var named []string
	for _, d := range res.Diagnostics {
		if d.Rule != "build-ignore" {
			named = append(named, d.String())
		}
	}
	p, err := interp.CompileSource("api/x.go", []byte(src), interp.Options{Module: m})
	if err != nil {
		t.Logf("compile: %v; check: %v", err, named)
		if len(named) == 0 || !strings.HasPrefix(named[0], "lib/gen/gen.go:") {
			t.Fatalf("the compile fails (%v) and check names nothing in lib/gen/gen.go: %v", err, named)
		}
		return
	}
	v, _ := p.Var("f")
	if got := v.Interface().(func() any)(); !reflect.DeepEqual(got, []int{2, 3}) {
		t.Fatalf("gen.Map = %v, compiled Go []int{2, 3}", got)
	}
}

// TestLibNewerStdlibNamed: a package function of Go 1.21+ the interpreter
// cannot run, called in an application package, fails the compile at the
// package file's line, not at a line of Yaegi's ("341:20: undefined type
// for E"), and check names every such call at once.
func TestLibNewerStdlibNamed(t *testing.T) {
	m := blogModule(t, map[string]string{"lib/s/s.go": "package s\n\nimport \"slices\"\n\nfunc Top(xs []int) int {\n" +
		"\tys := slices.Clone(xs)\n\tslices.Sort(ys)\n\treturn slices.Max(ys)\n}\n"})
	src := "package main\n\nimport \"example.com/blog/lib/s\"\n\nvar f = func() any { return s.Top([]int{3, 1}) }\n"
	res := interp.CheckFile("api/x.go", []byte(src), interp.Options{Module: m})
	var got []string
	for _, d := range res.Diagnostics {
		if d.Rule == "missing-symbol" {
			got = append(got, d.File+":"+strconv.Itoa(d.Line)+":"+strconv.Itoa(d.Col))
		}
	}
	if strings.Join(got, " ") != "lib/s/s.go:7:2 lib/s/s.go:8:9" {
		t.Errorf("check names %v, want lib/s/s.go:7:2 and lib/s/s.go:8:9", got)
	}
	_, err := interp.CompileSource("api/x.go", []byte(src), interp.Options{Module: m})
	if err == nil || !strings.HasPrefix(err.Error(), "lib/s/s.go:7:2: slices.Sort") {
		t.Errorf("compile error %v, want lib/s/s.go:7:2: slices.Sort ...", err)
	}
}
