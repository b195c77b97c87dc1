package buildgen

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goSums returns the go.sum lines of the modules mods (path@version),
// from the go command.
func goSums(t *testing.T, mods ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"mod", "download", "-json"}, mods...)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("modules %v not available: %v", mods, err)
	}
	var b strings.Builder
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m struct{ Path, Version, Sum, GoModSum string }
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		b.WriteString(m.Path + " " + m.Version + " " + m.Sum + "\n" + m.Path + " " + m.Version + "/go.mod " + m.GoModSum + "\n")
	}
	return b.String()
}

// TestSymbolCache: the symbol tables of a build are generated once and
// taken from the cache by the next builds, until a module's version in
// go.mod, or the source of a package in a module replaced by a
// directory, changes; a package left out is said again at each build.
func TestSymbolCache(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	top := t.TempDir()
	app, cache := filepath.Join(top, "app"), filepath.Join(top, "cache")
	req, sum := zealgoModule(t)
	gomod := func(syncVersion string) string {
		return "module example.com/app\n\ngo 1.26.8\n\n" + req + "\nrequire golang.org/x/sync v0.24.0\n\nrequire example.com/dep v0.0.0\n\n" +
			"replace example.com/dep => ../dep\n\nreplace golang.org/x/sync => golang.org/x/sync " + syncVersion + "\n"
	}
	writeTree(t, top, map[string]string{
		"app/go.mod": gomod("v0.23.0"),
		"app/go.sum": sum + goSums(t, "golang.org/x/sync@v0.23.0", "golang.org/x/sync@v0.22.0"),
		"app/api/x.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"example.com/dep\"\n\t\"example.com/dep/gen\"\n\t\"golang.org/x/sync/semaphore\"\n)\n\n" +
			"var x = func() any { return []any{dep.Hello(), gen.Map([]int{1}, func(n int) int { return n }), semaphore.NewWeighted(1)} }\n",
		"dep/go.mod":     "module example.com/dep\n\ngo 1.22\n",
		"dep/dep.go":     "package dep\n\n// Hello greets.\nfunc Hello() string { return \"hi\" }\n",
		"dep/gen/gen.go": "package gen\n\n// Map maps xs.\nfunc Map[T, U any](xs []T, f func(T) U) []U { return nil }\n",
	})
	o, err := Options{Root: app, CacheDir: cache}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	depTable := filepath.Join(o.Dir, symbolsDir, "example_com-dep.go")
	run := func(what string, cached bool) string {
		t.Helper()
		var stderr bytes.Buffer
		o.Stderr = &stderr
		if _, err := generate(context.Background(), o); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, stderr.String())
		}
		log := stderr.String()
		t.Logf("%s: %s", what, log)
		if damaged := strings.Contains(log, "the cached interpreter symbols are damaged"); damaged != strings.Contains(what, "damaged") {
			t.Errorf("%s: the log says damaged %v:\n%s", what, damaged, log)
		}
		if !strings.Contains(log, "interpreter symbols for 2 of 3 module package(s) the application imports") ||
			strings.Contains(log, "from the cache") != cached {
			t.Errorf("%s: want the tables of 2 packages, from the cache %v:\n%s", what, cached, log)
		}
		if !strings.Contains(log, "no interpreter symbols for example.com/dep/gen (files importing it run compiled only): no exported names but generic ones") {
			t.Errorf("%s: the generic package is not said to be left out:\n%s", what, log)
		}
		src, err := os.ReadFile(depTable)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return string(src)
	}
	first := run("first build", false)
	if !strings.Contains(first, `reflect.ValueOf(dep.Hello)`) {
		t.Fatalf("the table of dep:\n%s", first)
	}
	if again := run("second build", true); again != first {
		t.Errorf("the cached table differs:\n%s", again)
	}
	// A damaged entry (a table whose content is not the one stored) is
	// generated again, said, and stored whole for the next build.
	stored, _ := filepath.Glob(filepath.Join(cache, "symbols", "*", "example_com-dep.go"))
	if len(stored) != 1 {
		t.Fatalf("cached tables of dep: %v", stored)
	}
	if err := os.WriteFile(stored[0], []byte("package symbols\n\nfunc init() { broken("), 0o644); err != nil {
		t.Fatal(err)
	}
	if again := run("a build after the cached table was damaged", false); again != first {
		t.Errorf("the table generated again differs:\n%s", again)
	}
	run("the build after it", true)
	writeTree(t, top, map[string]string{"app/go.mod": gomod("v0.22.0")})
	run("after a version bump in go.mod", false)
	run("the build after it", true)
	writeTree(t, top, map[string]string{"dep/dep.go": "package dep\n\n// Hello greets.\nfunc Hello() string { return \"hi\" }\n\n// Bye leaves.\nfunc Bye() {}\n"})
	if changed := run("after an edit of a directory module", false); !strings.Contains(changed, `reflect.ValueOf(dep.Bye)`) {
		t.Errorf("the table of the edited package:\n%s", changed)
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "symbols", "*", "manifest.json"))
	if len(entries) != 3 {
		t.Errorf("%d cache entries, want 3: %v", len(entries), entries)
	}
}
