package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/interp/check"
	"github.com/zealgo/zealgo/symbols"
)

// TestCorpus runs the Checker over each file of the trap corpus
// (testdata/traps/api/<name>.go, one tiny program per behaviour) and
// compares with <name>.check, the expected output of zealgo check: every
// diagnostic of the Checker is there, in order, and what else is there
// (the host's own problems, as host.TestCheckCorpus records them) comes
// only for a file without an error of the Checker. A new trap is one
// file pair (go test ./host -run TestCheckCorpus -update writes the
// .check and its .response).
func TestCorpus(t *testing.T) {
	names, err := filepath.Glob("testdata/traps/api/*.go")
	if err != nil || len(names) < 20 {
		t.Fatalf("the corpus has %d files (%v)", len(names), err)
	}
	c := check.New(symbols.Symbols)
	for _, path := range names {
		name := strings.TrimSuffix(filepath.Base(path), ".go")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(path, ".go") + ".check")
			if err != nil {
				t.Fatal(err)
			}
			r := c.File("api/"+name+".go", src)
			var got []string
			hasErr := false
			for _, d := range r.Diagnostics {
				got = append(got, d.String())
				hasErr = hasErr || !check.IsWarning(d.Rule)
			}
			lines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
			if string(want) == "" {
				lines = nil
			}
			rest := lines
			for _, g := range got {
				i := indexOf(rest, g)
				if i < 0 {
					t.Fatalf("check reports %q, not in %s.check:\n%s", g, name, want)
				}
				rest = rest[i+1:]
			}
			if len(lines) > len(got) && hasErr {
				t.Errorf("%s.check has more than the Checker's %d lines, though the file has an error:\n%s", name, len(got), want)
			}
		})
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
