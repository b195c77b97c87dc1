package host

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/zealgo/zealgo/internal/buildgen"
)

func init() {
	commands["build"] = command{"compile every handler, page and task file into one native binary", (*App).cmdBuild}
}

// cmdBuild is `zealgo build`: the application's handler, page and task
// files compiled by the Go compiler into one binary (internal/buildgen),
// whose main is this command's own main package unless --main names
// another, and which serves from the compiled registry (compiled.go).
func (a *App) cmdBuild(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := a.flags("build", stderr)
	var o buildgen.Options
	fs.StringVar(&o.Out, "o", "", "the binary to write (default <root>/<name of root>)")
	fs.StringVar(&o.Main, "main", mainPackage(), "import path of the main `package` to build (./x: x in the root's module)")
	fs.StringVar(&o.Dir, "dir", "", "directory of the generated program (default <root>/.zealgo/build)")
	fs.BoolVar(&o.Embed, "embed", false, "put the templates, static files and migrations in the binary")
	fs.BoolVar(&o.KeepGoing, "keep-going", false, "register a file that does not compile with its error instead of failing")
	if err := a.parseFlags(fs, args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zealgo build: unexpected arguments %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	o.Root, o.Stderr = a.cfg.Root, stderr
	out, err := buildgen.Build(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "zealgo build: wrote %s\n", out)
	return 0
}

// mainPackage returns the import path of this binary's main package:
// the application's own (github.com/zealgo/zealgo/sample for the sample),
// or zealgo's command.
func mainPackage() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" && !strings.HasSuffix(bi.Path, ".test") && bi.Path != "command-line-arguments" {
		return bi.Path
	}
	return "github.com/zealgo/zealgo/cmd/zealgo"
}
