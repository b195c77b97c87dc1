package scaffold

import (
	"bytes"
	"go/format"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

func TestGoVersionIsTheFrameworks(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Go == nil || f.Go.Version != GoVersion {
		t.Fatalf("GoVersion is %s, the go line of zealgo's go.mod %v", GoVersion, f.Go)
	}
}

// fakeCheckout returns a directory holding a go.mod of module modPath.
func fakeCheckout(t *testing.T, modPath string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+modPath+"\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestFromBuild(t *testing.T) {
	src := fakeCheckout(t, ModulePath)
	other := fakeCheckout(t, "example.com/other")
	missing := filepath.Join(t.TempDir(), "missing")
	main := func(v, sum string) debug.Module { return debug.Module{Path: ModulePath, Version: v, Sum: sum} }
	app := debug.Module{Path: "example.com/app", Version: "(devel)"}
	for _, tc := range []struct {
		name       string
		bi         debug.BuildInfo
		env        string
		candidates []string
		want       Framework
		err        string
	}{
		{name: "released", bi: debug.BuildInfo{Main: main("v1.2.3", "h1:abc=")}, candidates: []string{src},
			want: Framework{Version: "v1.2.3"}},
		{name: "devel", bi: debug.BuildInfo{Main: main("(devel)", "")}, candidates: []string{missing, other, src},
			want: Framework{Version: zeroVersion, ReplacePath: src}},
		{name: "stamped from git", bi: debug.BuildInfo{Main: main("v0.3.1-0.20260101000000-abcdefabcdef+dirty", "")}, candidates: []string{src},
			want: Framework{Version: "v0.3.1-0.20260101000000-abcdefabcdef", ReplacePath: src}},
		{name: "devel, checkout gone", bi: debug.BuildInfo{Main: main("(devel)", "")}, candidates: []string{missing, other},
			err: "was built from a source checkout that is not found; set ZEALGO_SOURCE"},
		{name: "environment wins", bi: debug.BuildInfo{Main: main("v1.2.3", "h1:abc=")}, env: src,
			want: Framework{Version: "v1.2.3", ReplacePath: src}},
		{name: "environment names no checkout", bi: debug.BuildInfo{Main: main("(devel)", "")}, env: other, candidates: []string{src},
			err: `$ZEALGO_SOURCE: ` + other + ` is no zealgo checkout: its go.mod declares "example.com/other"`},
		{name: "dependency released", bi: debug.BuildInfo{Main: app, Deps: []*debug.Module{{Path: ModulePath, Version: "v1.4.0", Sum: "h1:x="}}},
			want: Framework{Version: "v1.4.0"}},
		{name: "dependency replaced by a directory", bi: debug.BuildInfo{Main: app, Deps: []*debug.Module{{Path: ModulePath, Version: "v1.4.0",
			Replace: &debug.Module{Path: src, Version: "(devel)"}}}}, candidates: []string{missing},
			want: Framework{Version: "v1.4.0", ReplacePath: src}},
		{name: "dependency replaced by a module", bi: debug.BuildInfo{Main: app, Deps: []*debug.Module{{Path: ModulePath, Version: "v1.4.0",
			Replace: &debug.Module{Path: "example.com/fork", Version: "v1.4.1", Sum: "h1:y="}}}},
			want: Framework{Version: "v1.4.0", ReplacePath: "example.com/fork", ReplaceVersion: "v1.4.1"}},
		{name: "not linked", bi: debug.BuildInfo{Main: app}, err: "does not link github.com/zealgo/zealgo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fromBuild(&tc.bi, tc.env, tc.candidates)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "zealgo: new: ") {
					t.Fatalf("error %v, want one holding %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestRunning: this test binary is built from this checkout, which
// Running finds from the source path compiled in.
func TestRunning(t *testing.T) {
	t.Setenv(SourceEnv, "")
	fw, err := Running()
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	if !fw.Local() || fw.ReplacePath != root || fw.Version != zeroVersion {
		t.Fatalf("Running() = %+v, want the checkout %s at %s", fw, root, zeroVersion)
	}
}

func TestDefaultModule(t *testing.T) {
	for dir, want := range map[string]string{
		"blog":              "example.com/blog",
		"/srv/apps/My App!": "example.com/my-app",
		"Shop_2.v1":         "example.com/shop_2.v1",
		"!!!":               "",
	} {
		got, err := DefaultModule(dir)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("DefaultModule(%q) = %q, %v; want %q", dir, got, err, want)
		}
	}
	if _, err := DefaultModule("!!!"); err == nil || !strings.Contains(err.Error(), "give one with --module") {
		t.Errorf("error %v", err)
	}
}

func TestNewData(t *testing.T) {
	d, err := NewData("github.com/Ada/Blog/v2")
	if err != nil || d.Name != "blog" || d.Module != "github.com/Ada/Blog/v2" || d.GoVersion != GoVersion {
		t.Fatalf("NewData: %+v, %v", d, err)
	}
	if _, err := NewData("bad path"); err == nil || !strings.HasPrefix(err.Error(), "zealgo: new: module path: ") {
		t.Fatalf("bad path: %v", err)
	}
}

// wantFiles are the files of a new application.
var wantFiles = []string{
	".dockerignore", ".gitignore", "Dockerfile", "README.md",
	"api/hello.go", "api/notes.go", "go.mod", "golden_test.go", "lib/notes/notes.go",
	"migrations/001_notes.sql", "public/css/style.css", "public/index.go", "setup.go", "task/tally.go",
	"template/index.html", "testdata/golden/hello.txtar", "testdata/golden/index.txtar", "testdata/golden/notes.txtar",
}

func write(t *testing.T, modPath string, fw Framework) (string, []string) {
	t.Helper()
	d, err := NewData(modPath)
	if err != nil {
		t.Fatal(err)
	}
	d.Zealgo = fw
	dir := filepath.Join(t.TempDir(), "app")
	written, err := Write(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(written)
	return dir, written
}

func TestWriteCheckout(t *testing.T) {
	dir, written := write(t, "example.com/blog", Framework{Version: zeroVersion, ReplacePath: "/src/zealgo co"})
	if strings.Join(written, " ") != strings.Join(wantFiles, " ") {
		t.Fatalf("wrote %v\nwant  %v", written, wantFiles)
	}
	f := parseGoMod(t, dir)
	if f.Module.Mod.Path != "example.com/blog" || f.Go.Version != GoVersion || len(f.Require) != 1 ||
		f.Require[0].Mod.Path != ModulePath || f.Require[0].Mod.Version != zeroVersion {
		t.Fatalf("go.mod: %+v %+v %+v", f.Module.Mod, f.Go, f.Require)
	}
	if len(f.Replace) != 1 || f.Replace[0].New.Path != "/src/zealgo co" || f.Replace[0].New.Version != "" {
		t.Fatalf("go.mod replaces %+v", f.Replace)
	}
	for _, name := range written {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		checkFile(t, name, b)
	}
	docker := readFile(t, dir, "Dockerfile")
	for _, w := range []string{"--build-context zealgo=/src/zealgo co", "COPY --from=zealgo . /zealgo", "FROM golang:" + GoVersion + " AS build",
		"CGO_ENABLED=0 go build", "USER nonroot", "-t blog ."} {
		if !strings.Contains(docker, w) {
			t.Errorf("Dockerfile lacks %q:\n%s", w, docker)
		}
	}
}

// checkFile checks a written file: Go formatted, handler files left out
// of go build, imports of lib/ by the module path, no template left.
func checkFile(t *testing.T, name string, b []byte) {
	t.Helper()
	if strings.HasSuffix(name, ".go") {
		if f, err := format.Source(b); err != nil || !bytes.Equal(f, b) {
			t.Errorf("%s is not gofmt-formatted (%v)", name, err)
		}
	}
	top := strings.Split(name, "/")[0]
	if (top == "api" || top == "public" || top == "task") && strings.HasSuffix(name, ".go") && !bytes.HasPrefix(b, []byte("//go:build ignore\n\npackage main\n")) {
		t.Errorf("%s does not start with //go:build ignore and package main", name)
	}
	if bytes.Contains(b, []byte("/lib/notes\"")) && !bytes.Contains(b, []byte("\"example.com/blog/lib/notes\"")) {
		t.Errorf("%s imports lib/notes by another path", name)
	}
	if name != "template/index.html" && bytes.Contains(b, []byte("{{")) || bytes.Contains(b, []byte("<no value>")) {
		t.Errorf("%s holds template text:\n%s", name, b)
	}
}

func TestWriteReleased(t *testing.T) {
	dir, _ := write(t, "example.com/shop", Framework{Version: "v1.4.0"})
	f := parseGoMod(t, dir)
	if len(f.Replace) != 0 || f.Require[0].Mod.Version != "v1.4.0" {
		t.Fatalf("go.mod: %+v %+v", f.Require, f.Replace)
	}
	docker := readFile(t, dir, "Dockerfile")
	if strings.Contains(docker, "zealgo=") || strings.Contains(docker, "--from=zealgo") || !strings.Contains(docker, "docker build -t shop .") {
		t.Errorf("Dockerfile of a released zealgo:\n%s", docker)
	}
	if readme := readFile(t, dir, "README.md"); strings.Contains(readme, "--build-context") || !strings.Contains(readme, "example.com/shop/lib/notes") {
		t.Errorf("README:\n%s", readme)
	}
}

func TestWriteRefusesNonEmptyDir(t *testing.T) {
	d, _ := NewData("example.com/blog")
	d.Zealgo = Framework{Version: "v1.4.0"}
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Write(dir, d)
	if err == nil || err.Error() != "zealgo: new: "+dir+" is not empty (it holds notes.txt): give a new or empty directory" {
		t.Fatalf("error %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory now holds %d entries", len(entries))
	}
	if _, err := Write(keep, d); err == nil {
		t.Fatal("a file taken for a directory")
	}
}

func parseGoMod(t *testing.T, dir string) *modfile.File {
	t.Helper()
	f, err := modfile.Parse("go.mod", []byte(readFile(t, dir, "go.mod")), nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
