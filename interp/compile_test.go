package interp_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/interp"
)

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      string // Error() of the *interp.Error
		selector  string
		recvType  string
	}{
		{"syntax", "package main\n\nvar f = func() any { return ( }\n",
			"x.go:3:31: expected operand, found '}'", "", ""},
		{"undefined", "package main\n\nvar f = func() any { return nope }\n",
			"x.go:3:29: undefined: nope", "", ""},
		{"selector on param", "package main\n\nimport \"strings\"\n\nvar f = func(b *strings.Builder) any {\n\treturn b.Lenn()\n}\n",
			"x.go:6:9: undefined selector: Lenn", "Lenn", "*strings.Builder"},
		{"selector on local var", "package main\n\nimport \"strings\"\n\nvar f = func() any {\n\tvar b strings.Builder\n\treturn b.Lenn()\n}\n",
			"x.go:7:9: undefined method: Lenn", "Lenn", "strings.Builder"},
		{"legacy build line", "// +build ignore\n\npackage main\n\nvar f = 1\n",
			"x.go:1:1: legacy // +build line is not supported; use //go:build", "", ""},
		{"range over int", "package main\n\nvar f = func() any {\n\tfor i := range 3 {\n\t\t_ = i\n\t}\n\treturn nil\n}\n",
			"x.go:4:2: range over an int is not supported by the interpreter (Go 1.22 rules): use for i := 0; i < n; i++", "", ""},
		{"range over func", "package main\n\nvar f = func() any {\n\tfor x := range func(yield func(int) bool) {} {\n\t\t_ = x\n\t}\n\treturn nil\n}\n",
			"x.go:4:2: range over a func is not supported by the interpreter: call the func with a yield callback", "", ""},
		{"builtin min", "package main\n\nvar f = func() any { return min(1, 2) }\n",
			"x.go:3:29: the builtin min is not supported by the interpreter (Go 1.22 rules)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := interp.CompileSource("x.go", []byte(tc.src), interp.Options{})
			var ce *interp.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v, want *interp.Error", err, err)
			}
			if ce.Error() != tc.want || ce.Selector != tc.selector || ce.ReceiverType != tc.recvType {
				t.Fatalf("got %q (selector %q, receiver type %q)\nwant %q (%q, %q)", ce.Error(), ce.Selector, ce.ReceiverType, tc.want, tc.selector, tc.recvType)
			}
		})
	}
}

func TestCompileShadowedMinIsFine(t *testing.T) {
	src := "package main\n\nfunc min(a, b int) int { if a < b { return a }; return b }\n\nvar f = func() any { return min(1, 2) }\n"
	p, err := interp.CompileSource("x.go", []byte(src), interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := p.Var("f")
	if got := v.Interface().(func() any)(); got != 1 {
		t.Fatalf("min(1, 2) = %v", got)
	}
}

func TestCompileVarsAndSymbols(t *testing.T) {
	syms := interp.Exports{"example.com/greet/greet": {
		"Hello": reflect.ValueOf(func(n string) string { return "hello " + n }),
	}}
	src := `package handlers

import "example.com/greet"

var a, b = 1, "two"

var f = func(n string) string { return greet.Hello(n) }

var _ = 3
`
	p, err := interp.CompileSource("h.go", []byte(src), interp.Options{Symbols: []interp.Exports{syms}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Package != "handlers" || strings.Join(p.Vars(), ",") != "a,b,f" {
		t.Fatalf("package %q vars %v", p.Package, p.Vars())
	}
	if v, ok := p.Var("b"); !ok || v.Interface() != "two" {
		t.Fatalf("b = %v", v)
	}
	f, _ := p.Var("f")
	if got := f.Interface().(func(string) string)("ada"); got != "hello ada" {
		t.Fatalf("f = %q", got)
	}
	if pos := p.Position("f"); pos.Line != 7 || pos.Column != 5 {
		t.Fatalf("position of f: %v", pos)
	}
	if _, ok := p.Var("missing"); ok {
		t.Fatal("missing var found")
	}
}

func TestCompileOutputAndPanic(t *testing.T) {
	var out strings.Builder
	src := "package main\n\nimport \"fmt\"\n\nvar f = func() { fmt.Println(\"printed\") }\n\nvar g = func() { var m map[string]int; m[\"x\"] = 1 }\n"
	p, err := interp.CompileSource("x.go", []byte(src), interp.Options{Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := p.Var("f")
	f.Interface().(func())()
	if out.String() != "printed\n" {
		t.Fatalf("stdout %q", out.String())
	}
	g, _ := p.Var("g")
	r := func() (r any) {
		defer func() { r = recover() }()
		g.Interface().(func())()
		return nil
	}()
	if msg := interp.DescribePanic(r); !strings.Contains(msg, "nil map") {
		t.Fatalf("panic %q", msg)
	}
}

func TestCompileMissingFile(t *testing.T) {
	_, err := interp.Compile(filepath.Join(t.TempDir(), "none.go"), interp.Options{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err %v", err)
	}
}

func TestDescribePanicOddValues(t *testing.T) {
	for _, v := range []any{reflect.ValueOf(42), reflect.Value{}, errors.New("e"), struct{ A int }{1}, nil} {
		if s := interp.DescribePanic(v); s == "" && v != nil {
			t.Errorf("DescribePanic(%#v) is empty", v)
		}
	}
	_ = fmt.Sprint()
}

// TestCompileEndlessInit: a file whose initialization never ends is
// stopped at InitTimeout and reported; a file whose initialization panics
// is reported too; neither takes the process down.
func TestCompileEndlessInit(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"endless var initializer", "package main\n\nvar n = func() int {\n\tfor {\n\t}\n}()\n",
			"x.go: the file's package-level initialization (var initializers, init funcs) did not finish within 200ms and was stopped"},
		{"endless init", "package main\n\nfunc init() {\n\tfor i := 0; ; i++ {\n\t}\n}\n",
			"x.go: the file's package-level initialization (var initializers, init funcs) did not finish within 200ms and was stopped"},
		{"panicking init", "package main\n\nfunc init() { panic(\"boom\") }\n", "x.go: interpreter panic: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := interp.CompileSource("x.go", []byte(tc.src), interp.Options{InitTimeout: 200 * time.Millisecond})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err %v; want %q", err, tc.want)
			}
		})
	}
}

// TestCompileSeesEnvironment: interpreted code reads the process's
// environment, as the same file compiled does.
func TestCompileSeesEnvironment(t *testing.T) {
	t.Setenv("ZEALGO_TEST_ENV", "from the process")
	src := "package main\n\nimport \"os\"\n\nvar v = func() any { return os.Getenv(\"ZEALGO_TEST_ENV\") + \"|\" + fmt.Sprint(len(os.Environ()) > 0) }\n"
	src = strings.Replace(src, "import \"os\"", "import (\n\t\"fmt\"\n\t\"os\"\n)", 1)
	p, err := interp.CompileSource("env.go", []byte(src), interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, ok := p.Var("v")
	if !ok {
		t.Fatal("no var v")
	}
	if got := v.Interface().(func() any)(); got != "from the process|true" {
		t.Fatalf("os.Getenv in an interpreted file: %q", got)
	}
}
