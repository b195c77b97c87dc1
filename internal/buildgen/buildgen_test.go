package buildgen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	src := "//go:build ignore\n\n// Package doc.\npackage main\n\nvar x = 1\n"
	out, err := rewrite("api/x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := "//line api/x.go:1:1\n                 \n\n// Package doc.\npackage handler\n\nvar x = 1\n"
	if string(out) != want {
		t.Errorf("rewrite:\n%q\nwant\n%q", out, want)
	}
	_, err = rewrite("api/old.go", []byte("// +build ignore\n\npackage main\n"))
	if err == nil || !strings.Contains(err.Error(), "1:1: legacy // +build line is not supported; use //go:build") {
		t.Errorf("legacy build line: %v", err)
	}
}

// TestBuildFailsOnErrors: a build stops before linking when a file does
// not compile, naming every such file as file:line:col, and turns an
// unused import into a _ import with a warning.
func TestBuildFailsOnErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root := t.TempDir()
	head := "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n"
	files := map[string]string{
		"api/a.go":      head + "var a = func(api *host.API) any {\n\treturn undefinedThing\n}\n",
		"public/b.go":   head + "var b = func(api *host.API) any {\n\tx := 1\n\treturn nil\n}\n",
		"api/unused.go": "//go:build ignore\n\npackage main\n\nimport \"strings\"\n\nvar unused = func() any { return 1 }\n",
		"api/ok.go":     head + "var ok = func(api *host.API) any { return api.Method() }\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	_, err := Build(context.Background(), Options{Root: root, Module: "../..", Dir: filepath.Join(root, "gen"), Out: filepath.Join(root, "bin"), Stderr: &stderr})
	if err == nil {
		t.Fatal("the build succeeded")
	}
	for _, w := range []string{"api/a.go:8:9: undefined: undefinedThing", "public/b.go:8:2: declared and not used: x"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error lacks %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "unused.go") || strings.Contains(err.Error(), "ok.go") {
		t.Errorf("the error names a file that compiles:\n%v", err)
	}
	if !strings.Contains(stderr.String(), `api/unused.go:5:8: "strings" imported and not used: imported as _ in the compiled program`) {
		t.Errorf("no warning for the unused import:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(root, "gen", ".gitignore")); err == nil {
		t.Errorf("a .gitignore outside a .zealgo directory")
	}
}
