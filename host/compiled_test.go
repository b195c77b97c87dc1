package host_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/zealgo/zealgo/internal/buildgen"
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
// picked by its source (CompiledFile.MatchSource). The binary is built
// while the package's other tests run (startCompiledGolden, from
// TestMain); the test, parallel, runs after the package's sequential
// tests, by when it is built.
func TestCompiledGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the host's tests a second time")
	}
	t.Parallel()
	b := compiledGolden
	if b == nil { // not started by TestMain (wantsCompiledGolden did not recognise -run)
		b = startCompiledGolden()
		t.Cleanup(func() { <-b.done; os.RemoveAll(b.dir) })
	}
	select {
	case <-b.done:
	case <-time.After(10 * time.Minute):
		t.Fatal("the compiled test binary was not built within 10 minutes")
	}
	if b.err != nil {
		t.Fatalf("%v\n%s", b.err, b.out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	run := "^(TestZealgoCompiledRegistry|TestGolden|TestPublicGolden)$/^(" + strings.Join(b.names, "|") + ")$"
	got, err := exec.CommandContext(ctx, b.bin, "-test.count=1", "-test.v", "-test.run", run).CombinedOutput()
	if err != nil {
		t.Fatalf("the archives on compiled handlers: %v\n%s", err, got)
	}
	if !strings.Contains(string(got), "--- PASS: TestZealgoCompiledRegistry") {
		t.Fatalf("the test binary did not serve compiled:\n%s", got)
	}
	if n := strings.Count(string(got), "--- PASS: TestGolden/") + strings.Count(string(got), "--- PASS: TestPublicGolden/"); n != len(b.names) {
		t.Fatalf("%d archives passed compiled, want %d:\n%s", n, len(b.names), got)
	}
}

// compiledBuild is the test binary of TestCompiledGolden, built in the
// background: done is closed when bin (or err, with the tools' output
// out) is there.
type compiledBuild struct {
	done  chan struct{}
	dir   string   // the build's temporary directory, bin inside it
	bin   string   // the host's test binary linking the compiled archives
	names []string // the archives that run compiled, quoted for -test.run
	err   error
	out   string
}

// compiledGolden is the build TestMain started, nil if it started none.
var compiledGolden *compiledBuild

// wantsCompiledGolden reports whether this run of the test binary runs
// TestCompiledGolden: not when fuzzing, listing, in -short mode, or when
// -run's first element does not match it or -skip's does. Flags must be parsed.
func wantsCompiledGolden() bool {
	if testing.Short() || flagValue("test.fuzz") != "" || flagValue("test.fuzzworker") == "true" || flagValue("test.list") != "" {
		return false
	}
	if skip, _, _ := strings.Cut(flagValue("test.skip"), "/"); skip != "" {
		if ok, _ := regexp.MatchString(skip, "TestCompiledGolden"); ok {
			return false
		}
	}
	pattern, _, _ := strings.Cut(flagValue("test.run"), "/")
	ok, err := regexp.MatchString(pattern, "TestCompiledGolden")
	return pattern == "" || ok || err != nil
}

// flagValue returns the value of the flag name, "" if there is none.
func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// startCompiledGolden starts building TestCompiledGolden's test binary:
// the archives' files written under a temporary directory, compiled by
// buildgen as an overlay of this package, and `go test -c` (without
// -race: the test is about compiled handlers, not races) linking them.
// The caller removes b.dir when done.
func startCompiledGolden() *compiledBuild {
	b := &compiledBuild{done: make(chan struct{})}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off") // taken now: tests may t.Setenv meanwhile
	go func() {
		defer close(b.done)
		b.err = b.build(env)
	}()
	return b
}

// build makes b's binary with the go command run in env.
func (b *compiledBuild) build(env []string) error {
	tmp, err := os.MkdirTemp("", "zealgo-compiled-golden")
	if err != nil {
		return err
	}
	b.dir = tmp
	var trees []string
	for _, suite := range []string{"golden", "public"} {
		paths, _ := filepath.Glob(filepath.Join("testdata", suite, "*.txtar"))
		for _, p := range paths {
			name := strings.TrimSuffix(filepath.Base(p), ".txtar")
			tree := filepath.Join(tmp, "trees", suite+"_"+name)
			if err := writeArchiveFiles(p, tree); err != nil {
				return err
			}
			trees = append(trees, tree)
			if interpretedOnly[name] == "" {
				b.names = append(b.names, regexp.QuoteMeta(name))
			}
		}
	}
	overlay := filepath.Join(tmp, "overlay.json")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, err = buildgen.Build(ctx, buildgen.Options{Root: trees[0], Trees: trees[1:], Module: "..", Dir: filepath.Join(tmp, "gen"),
		KeepGoing: true, Overlay: overlay, TestDir: ".", TestPackage: "host_test", Stderr: &out})
	if err != nil {
		b.out = out.String()
		return err
	}
	b.bin = filepath.Join(tmp, "host.test")
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", b.bin, "-overlay", overlay, "-vet=off", ".")
	cmd.Env = env
	got, err := cmd.CombinedOutput()
	if err != nil {
		b.out = string(got)
		return fmt.Errorf("go test -c: %w", err)
	}
	return nil
}

// writeArchiveFiles writes the files of the archive at path (its sections
// named like paths) under dir.
func writeArchiveFiles(path, dir string) error {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		return err
	}
	for _, f := range ar.Files {
		if !strings.Contains(f.Name, "/") {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
