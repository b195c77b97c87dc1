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
	edges := flag.Bool("edges", false, "also list the file references and the names they use")
	flag.Parse()
	pattern := "github.com/zealgo/zealgo/host"
	if flag.NArg() > 0 {
		pattern = flag.Arg(0)
	}
	r, err := load(pattern)
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

// load type-checks the package's non-test files and measures them.
func load(pattern string) (report, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports}
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
	return measure(p.Fset, p.Syntax, p.TypesInfo, p.Types), nil
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
	return ok
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
