package interp_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/interp"
	"github.com/zealgo/zealgo/interp/check"
)

// blogModule writes an application module example.com/blog with the given
// files besides go.mod, and returns it.
func blogModule(t *testing.T, files map[string]string) *interp.Module {
	t.Helper()
	files["go.mod"] = "module example.com/blog\n\ngo 1.22\n"
	root := testutil.WriteTree(t, files)
	m, err := interp.FindModule(root)
	if err != nil || m == nil || m.Path != "example.com/blog" || m.Dir != root {
		t.Fatalf("FindModule: %+v %v", m, err)
	}
	return m
}

// call compiles src as api/x.go with the module and calls its func f.
func call(t *testing.T, m *interp.Module, src string, opts interp.Options) any {
	t.Helper()
	opts.Module = m
	p, err := interp.CompileSource("api/x.go", []byte(src), opts)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := p.Var("f")
	return v.Interface().(func() any)()
}

const postsFiles = `package posts

import "example.com/blog/lib/text"

var count int

// Next counts the calls of this copy of the package.
func Next() int { count++; return count }

func Title(s string) string { return text.Upper(s) + suffix }
`

func TestModulePackagesImportEachOther(t *testing.T) {
	m := blogModule(t, map[string]string{
		"lib/posts/posts.go":  postsFiles,
		"lib/posts/more.go":   "package posts\n\nconst suffix = \"!\"\n",
		"lib/posts/x_test.go": "package posts\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { broken( }\n",
		"lib/posts/gen.go":    "//go:build ignore\n\npackage main\n\nbroken(\n",
		"lib/posts/_old.go":   "broken(",
		"lib/text/text.go":    "package text\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n",
	})
	// The file imports no standard package itself: the packages' own
	// imports (strings) reach the interpreter.
	src := "package main\n\nimport \"example.com/blog/lib/posts\"\n\nvar f = func() any { return posts.Title(\"hello\") }\n"
	if got := call(t, m, src, interp.Options{}); got != "HELLO!" {
		t.Fatalf("got %v", got)
	}
	if deps := interp.Dependencies(filepath.Join(m.Dir, "lib/posts/posts.go"), interp.Options{Module: m}); len(deps) != 1 ||
		deps[0] != filepath.Join(m.Dir, "lib/text") {
		t.Fatalf("Dependencies of a package file: %v", deps)
	}
}

// TestModuleStatePerFile: each compiled file has its own copy of a
// package's variables.
func TestModuleStatePerFile(t *testing.T) {
	m := blogModule(t, map[string]string{
		"lib/posts/posts.go": postsFiles,
		"lib/posts/more.go":  "package posts\n\nconst suffix = \"\"\n",
		"lib/text/text.go":   "package text\n\nfunc Upper(s string) string { return s }\n",
	})
	src := "package main\n\nimport \"example.com/blog/lib/posts\"\n\nvar f = func() any { return posts.Next() }\n"
	one, err := interp.CompileSource("api/one.go", []byte(src), interp.Options{Module: m})
	if err != nil {
		t.Fatal(err)
	}
	two, err := interp.CompileSource("api/two.go", []byte(src), interp.Options{Module: m})
	if err != nil {
		t.Fatal(err)
	}
	next := func(p *interp.Program) any { v, _ := p.Var("f"); return v.Interface().(func() any)() }
	got := []any{next(one), next(one), next(two), next(one)}
	if !reflect.DeepEqual(got, []any{1, 2, 1, 3}) {
		t.Fatalf("counts %v, want [1 2 1 3]", got)
	}
}

// TestModuleCompiledPackageWins: a package that a symbol table provides is
// the compiled one, for the file and for the packages it imports, even
// when its source lies in the module.
func TestModuleCompiledPackageWins(t *testing.T) {
	m := blogModule(t, map[string]string{
		"host/host.go": "package host\n\nfunc Who() string { return \"source\" }\n",
		"lib/a/a.go":   "package a\n\nimport \"example.com/blog/host\"\n\nfunc Who() string { return host.Who() }\n",
	})
	compiled := interp.Exports{"example.com/blog/host/host": {"Who": reflect.ValueOf(func() string { return "compiled" })}}
	src := "package main\n\nimport (\n\t\"example.com/blog/host\"\n\t\"example.com/blog/lib/a\"\n)\n\nvar f = func() any { return host.Who() + \"+\" + a.Who() }\n"
	if got := call(t, m, src, interp.Options{Symbols: []interp.Exports{compiled}}); got != "compiled+compiled" {
		t.Fatalf("got %v", got)
	}
	deps := interp.Dependencies(writeFile(t, m, "api/x.go", src), interp.Options{Module: m, Symbols: []interp.Exports{compiled}})
	if len(deps) != 1 || deps[0] != filepath.Join(m.Dir, "lib/a") {
		t.Fatalf("Dependencies: %v, want lib/a alone", deps)
	}
}

func writeFile(t *testing.T, m *interp.Module, rel, src string) string {
	t.Helper()
	p := filepath.Join(m.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestModuleGoroutineGuard: a goroutine started in a package file is
// recovered like one started in the compiled file.
func TestModuleGoroutineGuard(t *testing.T) {
	m := blogModule(t, map[string]string{
		"lib/bg/bg.go": "package bg\n\nfunc Start(done chan bool) {\n\tgo func() { defer close(done); panic(\"boom\") }()\n}\n",
	})
	panics := make(chan any, 1)
	src := "package main\n\nimport \"example.com/blog/lib/bg\"\n\nvar f = func() any { d := make(chan bool); bg.Start(d); <-d; return nil }\n"
	call(t, m, src, interp.Options{GoPanic: func(v any, _ []byte) { panics <- v }})
	select {
	case v := <-panics:
		if interp.DescribePanic(v) != "boom" {
			t.Fatalf("reported %v", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the panic was not reported")
	}
}

func TestModuleErrors(t *testing.T) {
	const handler = "package main\n\nimport \"example.com/blog/lib/%s\"\n\nvar f = func() any { return nil }\n"
	m := blogModule(t, map[string]string{
		"lib/bad/bad.go":      "package bad\n\nfunc B() string {\n\treturn undefinedX\n}\n",
		"lib/outer/outer.go":  "package outer\n\nimport _ \"example.com/blog/lib/bad\"\n",
		"lib/c1/c.go":         "package c1\n\nimport \"example.com/blog/lib/c2\"\n\nvar X = c2.X\n",
		"lib/c2/c.go":         "package c2\n\nimport \"example.com/blog/lib/c1\"\n\nvar X = c1.X\n",
		"lib/syntax/s.go":     "package syntax\n\nfunc B() string {\n\treturn (\n}\n",
		"lib/loop/l.go":       "package loop\n\nfunc N() (n int) {\n\tfor i := range 3 {\n\t\tn += i\n\t}\n\treturn\n}\n",
		"lib/prog/main.go":    "package main\n\nfunc main() {}\n",
		"lib/empty/x_test.go": "package empty\n",
		"lib/two/a.go":        "package a\n",
		"lib/two/b.go":        "package b\n",
		"lib/sel/sel.go":      "package sel\n\nimport \"strings\"\n\nfunc L(b *strings.Builder) int {\n\treturn b.Lenn()\n}\n",
	})
	for _, tc := range []struct{ pkg, want, selector string }{
		{"bad", "lib/bad/bad.go:4:9: undefined: undefinedX", ""},
		{"outer", "lib/bad/bad.go:4:9: undefined: undefinedX", ""},
		{"c1", "lib/c2/c.go:3:8: import cycle not allowed: example.com/blog/lib/c1 imports example.com/blog/lib/c2 imports example.com/blog/lib/c1", ""},
		{"syntax", "lib/syntax/s.go:5:1: expected operand, found '}'", ""},
		{"loop", "lib/loop/l.go:4:2: range over an int is not supported by the interpreter (Go 1.22 rules): use for i := 0; i < n; i++", ""},
		{"none", "api/x.go:3:8: package example.com/blog/lib/none is not in the application: there is no directory lib/none", ""},
		{"prog", `api/x.go:3:8: import "example.com/blog/lib/prog" is a program (package main in lib/prog/main.go), not an importable package`, ""},
		{"empty", "api/x.go:3:8: no Go files to import in lib/empty (_test.go files and files excluded by build constraints, " +
			"such as handler files with //go:build ignore, are left out)", ""},
		{"two", "lib/two/b.go:1:9: found packages a (a.go) and b (b.go) in lib/two", ""},
		{"sel", "lib/sel/sel.go:6:9: undefined selector: Lenn", "Lenn"},
		{"../../outside", `api/x.go:3:8: malformed import path "example.com/blog/lib/../../outside": invalid path element ".."`, ""},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			_, err := interp.CompileSource("api/x.go", []byte(strings.ReplaceAll(handler, "%s", tc.pkg)), interp.Options{Module: m})
			var ce *interp.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v, want *interp.Error", err, err)
			}
			if ce.Error() != tc.want {
				t.Fatalf("got  %q\nwant %q", ce.Error(), tc.want)
			}
			wantImporter := "api/x.go"
			if ce.File == "api/x.go" {
				wantImporter = ""
			}
			if ce.Importer != wantImporter || ce.Selector != tc.selector {
				t.Fatalf("importer %q selector %q", ce.Importer, ce.Selector)
			}
			if tc.selector != "" && (ce.Receiver != "b" || ce.ReceiverType != "*strings.Builder") {
				t.Fatalf("receiver %q of type %q, want them read from the package file", ce.Receiver, ce.ReceiverType)
			}
		})
	}
}

// TestCacheRebuildsImporters: a change to a package file rebuilds every
// cached file that imports it, directly or through another package, and a
// package that appears after the file failed for its absence is picked up.
func TestCacheRebuildsImporters(t *testing.T) {
	m := blogModule(t, map[string]string{
		"lib/word/word.go": "package word\n\nconst W = \"v1\"\n",
		"lib/wrap/wrap.go": "package wrap\n\nimport \"example.com/blog/lib/word\"\n\nfunc W() string { return \"[\" + word.W + \"]\" }\n",
	})
	direct := writeFile(t, m, "api/direct.go", "package main\n\nimport \"example.com/blog/lib/word\"\n\nvar f = func() any { return word.W }\n")
	nested := writeFile(t, m, "api/nested.go", "package main\n\nimport \"example.com/blog/lib/wrap\"\n\nvar f = func() any { return wrap.W() }\n")
	later := writeFile(t, m, "api/later.go", "package main\n\nimport \"example.com/blog/lib/later/now\"\n\nvar f = func() any { return now.N }\n")
	opts := interp.Options{Module: m}
	var builds atomic.Int64
	c, err := interp.NewCache(func(path string) (*interp.Program, error) {
		builds.Add(1)
		return interp.Compile(path, opts)
	}, interp.CacheOptions{Deps: func(path string) []string { return interp.Dependencies(path, opts) }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	answer := func(path string) any {
		p, err := c.Get(path)
		if err != nil {
			return err.Error()
		}
		v, _ := p.Var("f")
		return v.Interface().(func() any)()
	}
	if a, b := answer(direct), answer(nested); a != "v1" || b != "[v1]" {
		t.Fatalf("before: %v %v", a, b)
	}
	if a := answer(later); !strings.Contains(a.(string), "there is no directory lib/later/now") {
		t.Fatalf("missing package: %v", a)
	}
	writeFile(t, m, "lib/word/word.go", "package word\n\nconst W = \"v2\"\n")
	eventually(t, "both importers rebuilt", func() bool { return answer(direct) == "v2" && answer(nested) == "[v2]" })
	n := builds.Load()
	writeFile(t, m, "lib/word/word_test.go", "package word\n")
	writeFile(t, m, "lib/word/notes.txt", "x")
	// The watcher takes events in order: once the package written after
	// them is in, the two files above had their chance to rebuild.
	writeFile(t, m, "lib/later/now/now.go", "package now\n\nconst N = 42\n")
	eventually(t, "the new package", func() bool { return answer(later) == 42 })
	if got := builds.Load() - n; got != 1 {
		t.Fatalf("%d rebuilds for a _test.go file, a text file and a new package, want 1 (the new package's importer)", got)
	}
}

func TestFindModuleWithout(t *testing.T) {
	if m, err := interp.FindModule(t.TempDir()); m != nil || err != nil {
		t.Fatalf("no go.mod: %v %v", m, err)
	}
	root := testutil.WriteTree(t, map[string]string{"go.mod": "go 1.22\n"})
	if _, err := interp.FindModule(root); err == nil || !strings.Contains(err.Error(), "declares no module path") {
		t.Fatalf("go.mod without module: %v", err)
	}
}

// TestCheckFileModulePackages: package check type-checks a file against
// the application packages it imports, read from source: a right use is
// no problem (not "not linked"), a wrong one is a type error at the
// file's own line, and a package that cannot be loaded is named once.
func TestCheckFileModulePackages(t *testing.T) {
	m := blogModule(t, map[string]string{
		"lib/posts/posts.go": postsFiles,
		"lib/posts/more.go":  "package posts\n\nconst suffix = \"!\"\n",
		"lib/text/text.go":   "package text\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n",
	})
	const head = "//go:build ignore\n\npackage main\n\nimport \"example.com/blog/lib/posts\"\n\n"
	opts := interp.Options{Module: m}
	if d := noPackageState(interp.CheckFile("api/x.go", []byte(head+"var f = func() any { return posts.Title(\"a\") }\n"), opts).Diagnostics); len(d) != 0 {
		t.Errorf("a right use: %v", d)
	}
	d := noPackageState(interp.CheckFile("api/x.go", []byte(head+"var f = func() any { return posts.Title(1) }\n"), opts).Diagnostics)
	if len(d) != 1 || d[0].Line != 7 || d[0].Rule != "type" || !strings.Contains(d[0].Msg, "cannot use 1") {
		t.Errorf("a wrong use: %v", d)
	}
	writeFile(t, m, "lib/text/text.go", "package text\n\nfunc Upper(s string) string { return s\n")
	d = noPackageState(interp.CheckFile("api/x.go", []byte(head+"var f = func() any { return posts.Title(\"a\") }\n"), opts).Diagnostics)
	if len(d) != 1 || !strings.Contains(d[0].String(), "api/x.go: lib/text/text.go:3:") {
		t.Errorf("a broken package: %v", d)
	}
}

// noPackageState returns ds without the package-state warnings (the
// packages of these tests count calls in a package variable on purpose).
func noPackageState(ds []check.Diagnostic) []check.Diagnostic {
	var out []check.Diagnostic
	for _, d := range ds {
		if d.Rule != "package-state" {
			out = append(out, d)
		}
	}
	return out
}
