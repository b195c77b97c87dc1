package host_test

import (
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
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
