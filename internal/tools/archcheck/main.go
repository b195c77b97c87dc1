// Command archcheck measures the structure of a Go package (by default
// zealgo's host) with go/types and fails when it passes a limit: the
// methods and files of each named type, the methods, files and fields of
// the application type, and the share of the package's files in its
// largest reference loop (a strongly connected component of the graph in
// which file A references file B when A uses a name declared in B). Test
// files are not counted.
//
//	go run ./internal/tools/archcheck [flags] [package]
//
// With -edges it also lists the graph, one reference a line, "from.go ->
// to.go: the names used", those inside the largest loop marked "loop":
// to find what holds a file in the loop (grep '^loop from.go'), or what
// reaches a file (grep -- '-> cli'). A file leaves the loop when its
// references to the other loop files, or theirs to it, are cut.
//
// It also measures what a package importing the measured one compiles
// because it names its types (reach.go, probe.go): the generic
// instantiations the exported names lead to, the types they must not
// reach at all (host's running server, nats-server, the interpreter's
// cache), and the functions the compiler makes again for a package that
// calls every exported func and method, which zealgo build pays once per
// handler file.
package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// limits are the bounds archcheck enforces.
type limits struct {
	maxMethods, maxFiles                  int
	app                                   string
	maxAppMethods, maxAppFiles, maxFields int
	maxLoop                               float64
	forbid                                string // comma-separated patterns (forbidden)
	maxGeneric                            int    // most generic instantiations reached
	maxCompiled                           int    // most functions compiled again by the probe; -1: no probe
}

func main() {
	var l limits
	flag.IntVar(&l.maxMethods, "max-methods", 45, "most methods on any named type")
	flag.IntVar(&l.maxFiles, "max-files", 8, "most files any named type's methods are spread over")
	flag.StringVar(&l.app, "app", "App", "the application type")
	flag.IntVar(&l.maxAppMethods, "max-app-methods", 45, "most methods on the application type")
	flag.IntVar(&l.maxAppFiles, "max-app-files", 3, "most files the application type's methods are spread over")
	flag.IntVar(&l.maxFields, "max-app-fields", 15, "most fields of the application type")
	flag.Float64Var(&l.maxLoop, "max-loop", 0.60, "largest share of the package's files in one reference loop")
	flag.StringVar(&l.forbid, "forbid", defaultForbid, "comma-separated types (import/path.Name) or packages (import/path/) the exported names must not lead to")
	flag.IntVar(&l.maxGeneric, "max-reach-generic", 20, "most generic instantiations the exported names lead to")
	flag.IntVar(&l.maxCompiled, "max-compiled-funcs", 250, "most functions compiled again for a package calling every exported func and method (-1: skip)")
	edges := flag.Bool("edges", false, "also list the file references and the names they use")
	flag.Parse()
	pattern := "github.com/zealgo/zealgo/host"
	if flag.NArg() > 0 {
		pattern = flag.Arg(0)
	}
	r, err := load(pattern, l)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ok := write(os.Stdout, r, l)
	if *edges {
		writeEdges(os.Stdout, r)
	}
	if !ok {
		os.Exit(1)
	}
}

// defaultForbid is what host's exported names must not lead to: the
// running server (core) and the heaviest generic code behind it.
const defaultForbid = "github.com/zealgo/zealgo/host.core,github.com/zealgo/zealgo/interp.Cache,github.com/nats-io/nats-server/"

// load type-checks the package's non-test files and measures them, with
// what its exported names lead to (and the probe's compile cost unless
// l.maxCompiled is -1).
func load(pattern string, l limits) (report, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports | packages.NeedModule}
	pkgs, err := packages.Load(cfg, pattern)
	if err != nil {
		return report{}, fmt.Errorf("archcheck: load %s: %w", pattern, err)
	}
	if len(pkgs) != 1 {
		return report{}, fmt.Errorf("archcheck: %s matches %d packages, want 1", pattern, len(pkgs))
	}
	p := pkgs[0]
	if len(p.Errors) > 0 {
		return report{}, fmt.Errorf("archcheck: %s: %v", pattern, p.Errors[0])
	}
	r := measure(p.Fset, p.Syntax, p.TypesInfo, p.Types)
	r.Reach = reach(p.Types, strings.Split(l.forbid, ","))
	r.Compiled = -1
	if l.maxCompiled >= 0 {
		if p.Module == nil {
			return report{}, fmt.Errorf("archcheck: %s is in no module: no probe", pattern)
		}
		var err error
		if r.Compiled, r.CompiledFrom, err = compileCost(p.Types, p.Module.Path, p.Module.Dir); err != nil {
			return report{}, err
		}
	}
	return r, nil
}

// write writes the report and the limits it passes, and reports whether
// it keeps within them.
func write(w io.Writer, r report, l limits) bool {
	ok := true
	fail := func(format string, args ...any) {
		ok = false
		fmt.Fprintf(w, "FAIL "+format+"\n", args...)
	}
	fmt.Fprintf(w, "%-24s %7s %5s\n", "type", "methods", "files")
	for _, t := range r.Types {
		fmt.Fprintf(w, "%-24s %7d %5d\n", t.Name, t.Methods, len(t.Files))
	}
	fmt.Fprintf(w, "fields of %s: %d\n", l.app, r.Fields[l.app])
	share := 0.0
	if r.FileCount > 0 {
		share = float64(len(r.Loop)) / float64(r.FileCount)
	}
	fmt.Fprintf(w, "largest reference loop: %d of %d files (%.0f%%): %s\n",
		len(r.Loop), r.FileCount, 100*share, strings.Join(r.Loop, " "))
	for _, t := range r.Types {
		maxM, maxF := l.maxMethods, l.maxFiles
		if t.Name == l.app {
			maxM, maxF = l.maxAppMethods, l.maxAppFiles
		}
		if t.Methods > maxM {
			fail("%s has %d methods (at most %d)", t.Name, t.Methods, maxM)
		}
		if len(t.Files) > maxF {
			fail("%s has methods in %d files (at most %d): %s", t.Name, len(t.Files), maxF, strings.Join(t.Files, " "))
		}
	}
	if r.Fields[l.app] > l.maxFields {
		fail("%s has %d fields (at most %d)", l.app, r.Fields[l.app], l.maxFields)
	}
	if share > l.maxLoop {
		fail("%.0f%% of the files are in one reference loop (at most %.0f%%)", 100*share, 100*l.maxLoop)
	}
	writeReach(w, r, l, fail)
	return ok
}

// writeReach writes what the exported names lead to and what the probe
// compiled, and fails what passes the limits.
func writeReach(w io.Writer, r report, l limits, fail func(string, ...any)) {
	fmt.Fprintf(w, "exported names lead to %d named types, %d generic instantiations\n", r.Reach.Types, len(r.Reach.Generic))
	if len(r.Reach.Generic) > l.maxGeneric {
		fail("the exported names lead to %d generic instantiations (at most %d), which every importer compiles again: %s",
			len(r.Reach.Generic), l.maxGeneric, strings.Join(r.Reach.Generic, " "))
	}
	for _, f := range r.Reach.Forbidden {
		fail("an exported name leads to %s (hold it as any: see host.rtOf)", f)
	}
	if r.Compiled < 0 {
		return
	}
	fmt.Fprintf(w, "functions compiled again for a package calling every exported func and method: %d\n", r.Compiled)
	if r.Compiled > l.maxCompiled {
		top := r.CompiledFrom[:min(len(r.CompiledFrom), 12)]
		fail("a package calling every exported func and method compiles %d functions again (at most %d), most from:\n%s",
			r.Compiled, l.maxCompiled, strings.Join(top, "\n"))
	}
}

// writeEdges lists the references between files, sorted, one a line:
// "from.go -> to.go: names", prefixed "loop" when both files are in the
// largest loop.
func writeEdges(w io.Writer, r report) {
	in := map[string]bool{}
	for _, f := range r.Loop {
		in[f] = true
	}
	for _, from := range slices.Sorted(maps.Keys(r.Refs)) {
		for _, to := range slices.Sorted(maps.Keys(r.Refs[from])) {
			mark := "    "
			if in[from] && in[to] {
				mark = "loop"
			}
			fmt.Fprintf(w, "%s %s -> %s: %s\n", mark, from, to, strings.Join(r.Refs[from][to], " "))
		}
	}
}
