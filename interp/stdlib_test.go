package interp_test

import (
	"strings"
	"testing"

	"github.com/zealgo/zealgo/interp"
)

// TestStdlibSubset checks that a file gets the standard library packages it
// imports, with Yaegi's own set-up where it matters, and nothing else.
func TestStdlibSubset(t *testing.T) {
	cases := []struct {
		name, src string
		want      string // result of f(), or "panic: ..." prefix, or "compile: ..." substring
	}{
		{"lean imports", `package main
import ("strconv"; "strings")
var f = func() string { return strings.ToUpper("n") + strconv.Itoa(7) }`, "N7"},
		{"versioned path", `package main
import ("math/rand/v2"; "strconv")
var f = func() string { return strconv.Itoa(rand.IntN(1)) }`, "0"},
		{"generic source", `package main
import ("slices"; "strconv")
var f = func() string { return strconv.Itoa(slices.Index([]string{"a", "b"}, "b")) }`, "1"},
		{"log.Fatal panics instead of exiting", `package main
import "log"
var f = func() string { log.Fatal("stop"); return "" }`, "panic: stop"},
		{"no import, no package", `package main
var f = func() string { return strconv.Itoa(1) }`, "compile: undefined: strconv"},
		{"imported by a lean file only", `package main
import "strconv"
var f = func() string { return strings.ToUpper("x") + strconv.Itoa(1) }`, "compile: undefined: strings"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prog, err := interp.CompileSource("f.go", []byte(tc.src), interp.Options{})
			if want, ok := strings.CutPrefix(tc.want, "compile: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("compile error %v, want one with %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v, _ := prog.Var("f")
			got := func() (s string) {
				defer func() {
					if p := recover(); p != nil {
						s = "panic: " + interp.DescribePanic(p)
					}
				}()
				return v.Interface().(func() string)()
			}()
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("f() = %q, want %q", got, tc.want)
			}
		})
	}
}
