package host_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// libTrapApp is the lib trap corpus of issue 29 in an application: a
// struct with a method put in a map[string]any, a range over an int, and
// Go 1.21+ generic functions of the standard library, each in a package
// of its own that handler files import.
func libTrapApp() map[string]string {
	return map[string]string{
		"go.mod": "module example.com/blog\n\ngo 1.22\n",
		"lib/shape/shape.go": "package shape\n\ntype Point struct{ X, Y int }\n\nfunc (p Point) Sum() int { return p.X + p.Y }\n\n" +
			"// Doc holds a value with a method in a map[string]any.\nfunc Doc() map[string]any { return map[string]any{\"p\": Point{1, 2}} }\n",
		"lib/count/count.go": "package count\n\n// Squares ranges over an int.\nfunc Squares(n int) []int {\n\tvar out []int\n" +
			"\tfor i := range n {\n\t\tout = append(out, i*i)\n\t}\n\treturn out\n}\n",
		"lib/top/top.go": "package top\n\nimport \"slices\"\n\n// Top sorts a copy.\nfunc Top(xs []int) int {\n" +
			"\tys := slices.Clone(xs)\n\tslices.Sort(ys)\n\treturn slices.Max(ys)\n}\n",
		"api/shape.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"example.com/blog/lib/shape\"\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
			"var get = func(api *host.API) any { return shape.Doc() }\n",
		"api/count.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"example.com/blog/lib/count\"\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
			"var get = func(api *host.API) any { return count.Squares(3) }\n",
		"api/both.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"example.com/blog/lib/count\"\n\t\"example.com/blog/lib/top\"\n" +
			"\t\"github.com/zealgo/zealgo/host\"\n)\n\nvar get = func(api *host.API) any { return top.Top(count.Squares(3)) }\n",
	}
}

// TestLibTrapsCheckedAndFixed: application packages are held to the
// standard of handler files. A struct with a method in a map[string]any
// answers as built (the host's rewrite applies to lib/ files); the traps
// it cannot fix are named by zealgo check, every one in one run, each
// once and at the package file's own position; the handler that imports
// one answers a compile error at that position.
func TestLibTrapsCheckedAndFixed(t *testing.T) {
	ta := newTestApp(t, libTrapApp())
	if code, body := get(t, ta.srv.URL+"/api/shape"); code != 200 || body != `{"p":{"X":1,"Y":2}}` {
		t.Errorf("GET /api/shape: %d %s; want 200 {\"p\":{\"X\":1,\"Y\":2}} as built", code, body)
	}
	problems := check(t, ta.root)
	for _, want := range []string{
		"lib/count/count.go:6:2: range over an int",
		"lib/top/top.go:8:2: slices.Sort is not available",
		"lib/top/top.go:9:9: slices.Max is not available",
	} {
		if n := strings.Count(problems, want); n != 1 {
			t.Errorf("check names %q %d times, want once:\n%s", want, n, problems)
		}
	}
	if strings.Contains(problems, "shape") {
		t.Errorf("check names the fixed package:\n%s", problems)
	}
	ta2 := newTestApp(t, libTrapApp(), host.WithDev(true))
	if code, body := get(t, ta2.srv.URL+"/api/count"); code != 500 || !strings.Contains(body, "lib/count/count.go:6:2: range over an int") {
		t.Errorf("GET /api/count: %d %s; want 500 naming lib/count/count.go:6:2", code, body)
	}
}

// TestLibWarningsLogged: a problem that check finds in an application
// package reaches the server's log as a warning at the package file's own
// file:line:col, once for all the files that import the package, and again
// once the package file changes.
func TestLibWarningsLogged(t *testing.T) {
	lib := func(head string) string {
		return "package wait\n\n" + head + "// First returns the first value of a or b.\nfunc First(a, b chan int) int {\n\tselect {\n" +
			"\tcase v := <-a:\n\t\treturn v\n\tcase v := <-b:\n\t\treturn v\n\t}\n}\n"
	}
	handler := "//go:build ignore\n\npackage main\n\nimport (\n\t\"example.com/blog/lib/wait\"\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		"var get = func(api *host.API) any { _ = wait.First; return \"ok\" }\n"
	ta := newTestApp(t, map[string]string{"go.mod": "module example.com/blog\n\ngo 1.22\n", "lib/wait/wait.go": lib(""),
		"api/a.go": handler, "api/b.go": handler})
	for _, p := range []string{"/api/a", "/api/b"} {
		if code, body := get(t, ta.srv.URL+p); code != 200 {
			t.Fatalf("GET %s: %d %s", p, code, body)
		}
	}
	warning := func(line int) string {
		return fmt.Sprintf(`level=WARN msg="lib/wait/wait.go:%d:2: the interpreter keeps a select statement's cases`, line)
	}
	if n := strings.Count(ta.logs.String(), warning(5)); n != 1 {
		t.Fatalf("the log has the package's warning %d times, want once:\n%s", n, ta.logs.String())
	}
	if err := os.WriteFile(filepath.Join(ta.root, "lib", "wait", "wait.go"), []byte(lib("// Moved down.\n\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "the importers to reload", func() bool {
		return strings.Count(ta.logs.String(), `msg=reloaded`) >= 2
	})
	if n := strings.Count(ta.logs.String(), warning(7)); n != 1 {
		t.Errorf("after the edit, the log has the package's warning %d times, want once:\n%s", n, ta.logs.String())
	}
}
