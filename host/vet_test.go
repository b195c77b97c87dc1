package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// vetApp writes an application with files, its go.mod requiring this
// checkout (and the checkout's own requirements, so go list needs no
// go mod tidy), and returns its root.
func vetApp(t *testing.T, files map[string]string) string {
	t.Helper()
	checkout, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(checkout, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := regexp.MustCompile(`(?m)^module .*$`).ReplaceAllString(string(mod), "module example.com/vetapp") +
		"\nrequire github.com/zealgo/zealgo v0.0.0\n\nreplace github.com/zealgo/zealgo => " + checkout + "\n"
	files["go.mod"], files["go.sum"] = gomod, string(sum)
	return testutil.WriteTree(t, files)
}

func runVet(t *testing.T, root string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = host.New().Run(context.Background(), append([]string{"vet", "--root", root}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

const vetHead = "//go:build ignore\n\npackage main\n\nimport (\n\t\"fmt\"\n\t\"sync\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n"

// TestVetFindings: zealgo vet names a printf mistake, a copied lock and an
// unreachable statement in a handler, a page and a task file with
// file:line:col and the analyzer, and exits 1; --json gives the same.
func TestVetFindings(t *testing.T) {
	root := vetApp(t, map[string]string{
		"api/bad.go": vetHead + "var mu sync.Mutex\n\n" +
			"var get = func(api *host.API) any {\n" +
			"\tm := &sync.Mutex{}\n" +
			"\tcopied := *m\n" + // 16: copylocks
			"\t_ = &copied\n" +
			"\treturn fmt.Sprintf(\"%d\", \"x\")\n" + // 18: printf
			"}\n",
		"public/page.go": vetHead + "var _ sync.Mutex\n\nvar page = func(api *host.API) any {\n" +
			"\treturn fmt.Sprint(api.Method())\n" +
			"\tpanic(\"never\")\n" + // 16: unreachable
			"}\n",
		"task/job.go": "//go:build ignore\n\npackage main\n\nimport \"fmt\"\n\nvar job = func(n int) string {\n" +
			"\treturn fmt.Sprintf(\"%s\", n)\n" + // 8: printf
			"}\n",
	})
	out, errOut, code := runVet(t, root)
	want := []string{
		`api/bad.go:16:12: assignment copies lock value to copied: sync.Mutex (copylocks)`,
		`api/bad.go:18:22: fmt.Sprintf format %d has arg "x" of wrong type string (printf)`,
		`public/page.go:16:2: unreachable code (unreachable)`,
		`task/job.go:8:22: fmt.Sprintf format %s has arg n of wrong type int (printf)`,
	}
	if code != 1 || strings.TrimSpace(out) != strings.Join(want, "\n") {
		t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", code, out, strings.Join(want, "\n"), errOut)
	}
	if !strings.Contains(errOut, "4 finding(s) in 3 file(s)") {
		t.Fatalf("stderr: %s", errOut)
	}
	out, _, code = runVet(t, root, "--json")
	var res struct {
		Files    int `json:"files"`
		Problems []struct {
			File string `json:"file"`
			Line int    `json:"line"`
			Rule string `json:"rule"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if res.Files != 3 || len(res.Problems) != 4 || res.Problems[2].File != "public/page.go" || res.Problems[2].Rule != "unreachable" {
		t.Fatalf("json: %+v", res)
	}
}

// TestVetClean: a clean application, whose handler variables Go sees as
// unused, draws no finding and exits 0; a usage error exits 2.
func TestVetClean(t *testing.T) {
	root := vetApp(t, map[string]string{
		"api/users.go": vetHead + "var mu sync.Mutex\n\nvar middleware = []string{}\n\n" +
			"var list = func(api *host.API) any {\n\tmu.Lock()\n\tdefer mu.Unlock()\n\treturn fmt.Sprintf(\"%d\", 1)\n}\n\n" +
			"var get = func(api *host.API) any { return api.Method() }\n",
		"public/index.go": "//go:build ignore\n\npackage main\n\nvar index = func() any { return \"hi\" }\n",
		"task/sum.go":     "//go:build ignore\n\npackage main\n\nvar sum = func(a, b int) int { return a + b }\n",
	})
	out, errOut, code := runVet(t, root)
	if code != 0 || out != "" || !strings.Contains(errOut, "3 file(s) ok") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, _, code := runVet(t, root, "--nope"); code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
}
