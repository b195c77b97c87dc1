package host_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/zealgo/zealgo/internal/buildgen"
	"github.com/zealgo/zealgo/internal/testutil"
)

// interpretedOnly are the golden archives whose expectations are the
// interpreter's own, with why they differ compiled (README, "zealgo
// build"). Every other archive of testdata/golden and testdata/public runs
// in both modes with the same expectations.
var interpretedOnly = map[string]string{
	"error_compile": "Yaegi's own errors: range over int compiles, and go/types words some errors differently",
	"dev_check":     "sync.OnceValue, absent from the interpreter's standard library, compiles",
}

// TestCompiledGolden runs the golden suite (TestGolden) and the public-file
// suite (TestPublicGolden) on handlers compiled by the Go compiler: it
// compiles every archive's handler, page and task files as `zealgo build`
// does (buildgen, as an overlay of the host's test package) and runs the
// two tests again in one test binary that links them, where the host
// serves from the compiled registry. A file found in several archives is
// picked by its source (CompiledFile.MatchSource).
func TestCompiledGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the host's tests a second time")
	}
	// Mostly the go command's build: it runs beside the package's other
	// parallel tests (which mostly wait), after the sequential ones.
	t.Parallel()
	tmp := t.TempDir()
	var trees, names []string
	for _, suite := range []string{"golden", "public"} {
		paths, _ := filepath.Glob(filepath.Join("testdata", suite, "*.txtar"))
		for _, p := range paths {
			name := strings.TrimSuffix(filepath.Base(p), ".txtar")
			tree := filepath.Join(tmp, "trees", suite+"_"+name)
			writeArchiveFiles(t, p, tree)
			trees = append(trees, tree)
			if interpretedOnly[name] == "" {
				names = append(names, regexp.QuoteMeta(name))
			}
		}
	}
	overlay := filepath.Join(tmp, "overlay.json")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, err := buildgen.Build(ctx, buildgen.Options{Root: trees[0], Trees: trees[1:], Module: "..", Dir: filepath.Join(tmp, "gen"),
		KeepGoing: true, Overlay: overlay, TestDir: ".", TestPackage: "host_test", Stderr: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	run := "^(TestZealgoCompiledRegistry|TestGolden|TestPublicGolden)$/^(" + strings.Join(names, "|") + ")$"
	// Built as this binary was (-race or not): the host's test variant,
	// and every package built against it (symbols' tables among them),
	// are then in the build cache, and only the overlaid test package and
	// the compiled handlers are compiled (minutes otherwise).
	args := []string{"test", "-overlay", overlay, "-vet=off", "-count=1", "-v", "-run", run}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if testutil.Race {
		args = append(args, "-race")
		env = append(env, "CGO_ENABLED=1") // the race detector needs cgo (TestMain: testutil.BuildStatic)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, ".")...)
	cmd.Env = env
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the archives on compiled handlers: %v\n%s", err, got)
	}
	if !strings.Contains(string(got), "--- PASS: TestZealgoCompiledRegistry") {
		t.Fatalf("the test binary did not serve compiled:\n%s", got)
	}
	if n := strings.Count(string(got), "--- PASS: TestGolden/") + strings.Count(string(got), "--- PASS: TestPublicGolden/"); n != len(names) {
		t.Fatalf("%d archives passed compiled, want %d:\n%s", n, len(names), got)
	}
}

// writeArchiveFiles writes the files of the archive at path (its sections
// named like paths) under dir.
func writeArchiveFiles(t *testing.T, path, dir string) {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if !strings.Contains(f.Name, "/") {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
