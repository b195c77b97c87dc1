package interp_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/zealgo/zealgo/interp"
)

// TestPreload: Preload builds, for the checker of its symbol tables, the
// linked packages the files import, each once, and skips what it cannot
// read and the imports the binary does not link; a file compiled
// afterwards with the same tables compiles as before.
func TestPreload(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go":   "//go:build ignore\n\npackage main\n\nimport (\n\t\"strings\"\n\n\t\"example.com/greet\"\n)\n\nvar a = func() string { return greet.Hello(strings.ToLower(\"A\")) }\n",
		"b.go":   "//go:build ignore\n\npackage main\n\nimport (\n\t\"strings\"\n\t\"example.com/app/lib\"\n)\n",
		"bad.go": "package main\n\nimport (\n\t\"net/http\n",
	}
	var paths []string
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	paths = append(paths, filepath.Join(dir, "missing.go"))
	opts := interp.Options{Symbols: []interp.Exports{{"example.com/greet/greet": {
		"Hello": reflect.ValueOf(func(s string) string { return "hello " + s }),
	}}}}
	if n := interp.Preload(paths, opts); n != 2 {
		t.Errorf("Preload = %d packages, want 2 (strings, example.com/greet)", n)
	}
	p, err := interp.Compile(filepath.Join(dir, "a.go"), opts)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := p.Var("a")
	if got := v.Interface().(func() string)(); got != "hello a" {
		t.Errorf("a() = %q", got)
	}
}
