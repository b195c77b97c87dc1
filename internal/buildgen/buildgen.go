// Package buildgen is `zealgo build`: it generates a Go program in which
// every handler, page and task file of an application is compiled by the
// Go compiler, and builds it into one binary.
//
// The program is a module of its own (by default <root>/.zealgo/build),
// whose go.mod requires the application's module, replaced by its
// directory, with the application's requirements and go.sum, so that it
// builds offline from what the application already pins. Each file under
// api/, public/ and task/ becomes a package of its own under files/: its
// //go:build line is dropped, its package clause renamed, and a //line
// directive keeps its positions those of the original file. A generated
// file beside it registers its variables with host.RegisterCompiled: for
// each handler or page func an adapter (host.CompiledFunc) that injects
// the parameters by type, with no reflection per request. The main
// package is a copy of the application's main package with one more file,
// which imports every file's package and marks the binary compiled.
package buildgen

import (
	"context"
	"encoding/json"
	"fmt"
	"go/format"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Options configure Build.
type Options struct {
	// Root is the application directory holding api/, public/, task/.
	Root string
	// Trees are more application directories whose files are compiled in
	// too, for a test binary that serves several trees: a path found in
	// several trees with different sources is selected at run time by the
	// file found at the root (host.CompiledFile.Hash).
	Trees []string
	// Module is the directory of the go.mod the program builds with
	// (default: the one holding Root, or above it).
	Module string
	// Main is the import path of the main package (a path starting with
	// "./" is taken in Module's module), whose source is copied.
	Main string
	// Dir is where the program is generated (default <root>/.zealgo/build).
	Dir string
	// Out is the binary to write (default <root>/<root's name>).
	Out string
	// Embed puts the root's templates, static files and migrations in the
	// binary (host.EmbedAssets).
	Embed bool
	// KeepGoing registers a file that does not compile, or holds no valid
	// handler, with its error instead of failing the build: requests for
	// it then answer as interpreted ones do. For test suites.
	KeepGoing bool
	// CacheDir is where the symbol tables of the packages of other
	// modules that the application imports are kept between builds
	// (symcache.go); default os.UserCacheDir()/zealgo.
	CacheDir string
	// Stderr receives the go command's output.
	Stderr io.Writer
	// Progress, if set, receives a line per file the go command compiles
	// ("zealgo build: compiled 3/12 files (api/x.go)"), and a last line;
	// with ProgressTerminal, the lines overwrite each other.
	Progress         io.Writer
	ProgressTerminal bool

	// Overlay, for tests: instead of a program, write a `go build
	// -overlay` file at this path that adds the compiled files to the
	// application's module, as packages under <module>/zz_zealgo_compiled,
	// and to the package in TestDir a test file, in package TestPackage,
	// that links them and marks the test binary compiled. `go test
	// -overlay FILE ./pkg` then runs the package's tests on the compiled
	// handlers. Main and Out are not used.
	Overlay     string
	TestDir     string
	TestPackage string
}

// hostPath is the import path of the host package.
const hostPath = "github.com/zealgo/zealgo/host"

// genModule is the module path of the generated program.
const genModule = "zealgo.build/app"

// Build generates the program and builds it into opts.Out, and returns
// the binary's absolute path ("" with Overlay).
func Build(ctx context.Context, opts Options) (string, error) {
	o, err := opts.resolve()
	if err != nil {
		return "", err
	}
	if err := build(ctx, o); err != nil {
		return "", err
	}
	if o.Overlay != "" {
		return "", nil
	}
	return o.Out, nil
}

// build is Build with the options resolved.
func build(ctx context.Context, o Options) error {
	g, err := generate(ctx, o)
	if err != nil || o.Overlay != "" {
		return err
	}
	if err := g.writeMain(ctx); err != nil {
		return err
	}
	p := g.newProgress()
	if p == nil {
		return g.goCmd(ctx, "build", "-o", o.Out, "./main")
	}
	err = g.goCmdTo(ctx, p, "build", "-v", "-o", o.Out, "./main")
	p.finish()
	return err
}

// generate writes the program but its main package (with Overlay, the
// overlay).
func generate(ctx context.Context, o Options) (*generator, error) {
	g := &generator{opts: o, importBase: genModule, overlay: map[string]string{}}
	if err := g.prepareDir(); err != nil {
		return nil, err
	}
	if o.Overlay != "" {
		if err := g.readModule(); err != nil {
			return nil, err
		}
		g.importBase = g.modPath + "/zz_zealgo_compiled"
		g.virtBase = filepath.Join(o.Module, "zz_zealgo_compiled")
	} else if err := g.writeModule(); err != nil {
		return nil, err
	}
	for _, t := range append([]string{o.Root}, o.Trees...) {
		if err := g.addTree(t); err != nil {
			return nil, err
		}
	}
	if err := g.analyze(); err != nil {
		return nil, err
	}
	if o.Overlay != "" {
		return g, g.writeOverlay()
	}
	return g, g.writeSymbols(ctx)
}

// resolve fills in the defaults and makes the paths absolute.
func (o Options) resolve() (Options, error) {
	var err error
	if o.Root == "" {
		o.Root = "."
	}
	if o.Root, err = filepath.Abs(o.Root); err != nil {
		return o, fmt.Errorf("zealgo: build: %w", err)
	}
	for i, t := range o.Trees {
		if o.Trees[i], err = filepath.Abs(t); err != nil {
			return o, fmt.Errorf("zealgo: build: %w", err)
		}
	}
	if o.Module == "" {
		if o.Module, err = findModule(o.Root); err != nil {
			return o, err
		}
	}
	if o.Module, err = filepath.Abs(o.Module); err != nil {
		return o, fmt.Errorf("zealgo: build: %w", err)
	}
	if o.Dir == "" {
		o.Dir = filepath.Join(o.Root, ".zealgo", "build")
	}
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return o, fmt.Errorf("zealgo: build: %w", err)
	}
	if o.Out == "" {
		o.Out = filepath.Join(o.Root, filepath.Base(o.Root))
	}
	if o.Out, err = filepath.Abs(o.Out); err != nil {
		return o, fmt.Errorf("zealgo: build: %w", err)
	}
	if o.Main == "" {
		o.Main = hostPath[:strings.LastIndexByte(hostPath, '/')] + "/cmd/zealgo"
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	return o, nil
}

// findModule returns the directory of the go.mod holding dir.
func findModule(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("zealgo: build: no go.mod in %s or above it: the application must be a module (zealgo new writes one)", dir)
		}
	}
}

// generator holds the state of one build.
type generator struct {
	opts Options
	// importBase is the import path of the files' packages (the
	// generated module, or the application's with Overlay); virtBase,
	// with Overlay, the directory they appear in.
	importBase, virtBase string
	goVersion            string            // the module's language version, for go/types
	overlay              map[string]string // virtual path -> file written
	modPath              string            // the application's module path
	files                []*file           // in the order found
	byKey                map[string]*file
	pkgDirs              map[string]bool
	symbols              bool // the program carries symbol tables (symgen.go)
}

// prepareDir empties the generated files of an earlier build and writes a
// .gitignore that keeps the directory out of version control.
func (g *generator) prepareDir() error {
	for _, d := range []string{"files", "main"} {
		if err := os.RemoveAll(filepath.Join(g.opts.Dir, d)); err != nil {
			return fmt.Errorf("zealgo: build: %w", err)
		}
	}
	if err := os.MkdirAll(g.opts.Dir, 0o755); err != nil {
		return fmt.Errorf("zealgo: build: %w", err)
	}
	if parent := filepath.Dir(g.opts.Dir); filepath.Base(parent) == ".zealgo" {
		if err := os.WriteFile(filepath.Join(parent, ".gitignore"), []byte("# generated by zealgo build\n*\n"), 0o644); err != nil {
			return fmt.Errorf("zealgo: build: %w", err)
		}
	}
	return nil
}

// goCmd runs the go command in the generated module.
// write writes a generated file at rel, slash-separated below the
// generated directory, and with Overlay adds it to the overlay.
func (g *generator) write(rel string, data []byte) error {
	if strings.HasPrefix(filepath.Base(rel), "zz_") {
		data = formatted(data)
	}
	path := filepath.Join(g.opts.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("zealgo: build: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("zealgo: build: %w", err)
	}
	if g.virtBase != "" {
		g.overlay[filepath.Join(g.virtBase, filepath.FromSlash(rel))] = path
	}
	return nil
}

// writeOverlay writes the test file and the overlay file.
func (g *generator) writeOverlay() error {
	if g.opts.TestDir == "" || g.opts.TestPackage == "" {
		return fmt.Errorf("zealgo: build: an overlay needs a test directory and package")
	}
	path := filepath.Join(g.opts.Dir, "zz_zealgo_compiled_test.go")
	n := 0
	for _, f := range g.files {
		if f.registered {
			n++
		}
	}
	src := g.linkFile(g.opts.TestPackage, "the test binary") + fmt.Sprintf(`
// TestZealgoCompiledRegistry checks that the test binary serves compiled.
func TestZealgoCompiledRegistry(t *testing.T) {
	if !zg_host.Compiled() {
		t.Fatal("zealgo: the compiled files are not registered")
	}
	t.Log("compiled files linked: %d")
}
`, n)
	src = strings.Replace(src, "import (\n", "import (\n\t\"testing\"\n", 1)
	if err := os.WriteFile(path, formatted([]byte(src)), 0o644); err != nil {
		return fmt.Errorf("zealgo: build: %w", err)
	}
	dir, err := filepath.Abs(g.opts.TestDir)
	if err != nil {
		return fmt.Errorf("zealgo: build: %w", err)
	}
	g.overlay[filepath.Join(dir, "zz_zealgo_compiled_test.go")] = path
	data, err := json.MarshalIndent(map[string]any{"Replace": g.overlay}, "", "\t")
	if err != nil {
		return fmt.Errorf("zealgo: build: %w", err)
	}
	if err := os.WriteFile(g.opts.Overlay, data, 0o644); err != nil {
		return fmt.Errorf("zealgo: build: %w", err)
	}
	return nil
}

// formatted returns generated Go source gofmt'ed (as it is, should it not
// parse: the compiler then says why).
func formatted(src []byte) []byte {
	if out, err := format.Source(src); err == nil {
		return out
	}
	return src
}

func (g *generator) goCmd(ctx context.Context, args ...string) error {
	return g.goCmdTo(ctx, g.opts.Stderr, args...)
}

// goCmdTo is goCmd with its output to w.
func (g *generator) goCmdTo(ctx context.Context, w io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = g.opts.Dir
	cmd.Env = g.env()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("zealgo: build: go %s: %w", args[0], err)
	}
	return nil
}

// env is the go command's environment: the module mode of the generated
// module, no workspace, a static binary.
func (g *generator) env() []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
}
