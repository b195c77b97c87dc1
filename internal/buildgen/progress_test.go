package buildgen

import (
	"bytes"
	"testing"
)

// TestProgress: the lines of `go build -v` that name a file's package
// count it compiled, other package names are dropped, errors pass on, and
// the last line counts the files found in the build cache; on a terminal
// the lines overwrite each other.
func TestProgress(t *testing.T) {
	g := &generator{importBase: genModule, files: []*file{
		{rel: "api/a.go", pkgDir: "files/api/a_go", registered: true},
		{rel: "api/b.go", pkgDir: "files/api/b_go", registered: true},
		{rel: "api/bad.go", pkgDir: "files/api/bad_go"},
	}}
	for _, tc := range []struct {
		terminal bool
		want     string
	}{
		{false, "zealgo build: compiling 2 file(s)\nzealgo build: compiled 1/2 files (api/b.go)\n" +
			"zealgo build: 2/2 files compiled, 1 from the build cache\n"},
		{true, "zealgo build: compiling 2 file(s)\n\rzealgo build: compiled 1/2 files (api/b.go)\x1b[K\n" +
			"zealgo build: 2/2 files compiled, 1 from the build cache\n"},
	} {
		var progress, stderr bytes.Buffer
		g.opts = Options{Progress: &progress, ProgressTerminal: tc.terminal, Stderr: &stderr}
		p := g.newProgress()
		p.Write([]byte("github.com/zealgo/zealgo/host\nzealgo.build/app/files/api/b_go\n# zealgo.build/app/main\n"))
		p.Write([]byte("main/x.go:1:1: undefined: y"))
		p.finish()
		if progress.String() != tc.want {
			t.Errorf("terminal %v: progress\n%q\nwant\n%q", tc.terminal, progress.String(), tc.want)
		}
		if want := "# zealgo.build/app/main\nmain/x.go:1:1: undefined: y\n"; stderr.String() != want {
			t.Errorf("stderr %q, want %q", stderr.String(), want)
		}
	}
}
