package main

import (
	"strings"
	"testing"

	"github.com/zealgo/zealgo/internal/testutil"
)

// TestCheckWarnings: zealgo check on an application with one file that
// runs differently interpreted and built (a warning) and one clean file
// prints the warning with its position, says it is a warning, and exits 0;
// --strict exits 1; --json marks it a warning.
func TestCheckWarnings(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"api/clean.go": head + "var clean = func(api *host.API) any {\n\tvar fs []func() int\n\tfor i := 0; i < 3; i++ {\n" +
			"\t\tfs = append(fs, func() int { return i })\n\t}\n\treturn fs[0]()\n}\n",
		"api/late.go": head + "func rec(to *[]int, n int) { *to = append(*to, n) }\n\n" +
			"var late = func(api *host.API) any {\n\tvar out []int\n\tfunc() {\n\t\tx := 1\n\t\tdefer rec(&out, x)\n\t\tx = 2\n\t}()\n\treturn out\n}\n",
	})
	out, errOut, code := run(t, "check", "--root", root)
	want := "api/late.go:13:3: interpreted, this deferred call sees the last value of x, which changes after the defer statement"
	if code != 0 || !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
		t.Fatalf("exit %d, want 0; stdout:\n%s\nwant a line starting %q; stderr %s", code, out, want, errOut)
	}
	if !strings.Contains(errOut, "1 problem(s) in 2 file(s): 1 warning(s), no error") {
		t.Errorf("summary: %s", errOut)
	}
	if _, errOut, code := run(t, "check", "--root", root, "--strict"); code != 1 {
		t.Errorf("--strict: exit %d, want 1: %s", code, errOut)
	}
	if out, _, code := run(t, "check", "--root", root, "--json"); code != 0 ||
		!strings.Contains(out, `"rule": "defer-eval"`) || !strings.Contains(out, `"severity": "warning"`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
	// An error still fails, warnings or not.
	bad := testutil.WriteTree(t, map[string]string{
		"api/late.go": head + "var late = func(api *host.API) any { return min(1, 2) }\n",
	})
	if _, errOut, code := run(t, "check", "--root", bad); code != 1 || !strings.Contains(errOut, "1 error(s), 0 warning(s)") {
		t.Errorf("an error: exit %d, %s", code, errOut)
	}
}
