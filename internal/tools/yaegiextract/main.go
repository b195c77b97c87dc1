// Command yaegiextract is `yaegi extract` (github.com/traefik/yaegi
// v0.16.1, cmd/yaegi) for the go:generate directives of this module: the
// same flags and the same generated files, in seconds instead of
// minutes. It loads the packages to extract, all at once, with
// golang.org/x/tools/go/packages from the export data of the build cache
// (what `go build` compiled), where upstream type-checks each one and all
// its imports from source; the files are written by upstream's own
// generator (extract.go).
//
//	go run ./internal/tools/yaegiextract -name symbols github.com/zealgo/zealgo/host
package main

import (
	"flag"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "yaegiextract:", err)
		os.Exit(1)
	}
}

// run parses upstream's flags (but -license) and writes one file per
// package into the working directory, named as upstream names it.
func run(args []string) error {
	var name, exclude, include, tag string
	fs := flag.NewFlagSet("yaegiextract", flag.ContinueOnError)
	fs.StringVar(&name, "name", "", "the namespace for the extracted symbols")
	fs.StringVar(&exclude, "exclude", "", "comma separated list of regexp matching symbols to exclude")
	fs.StringVar(&include, "include", "", "comma separated list of regexp matching symbols to include")
	fs.StringVar(&tag, "tag", "", "comma separated list of build tags to be added to the created package")
	if err := fs.Parse(args); err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return fmt.Errorf("missing package")
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if name == "" {
		name = filepath.Base(wd)
	}
	ext := Extractor{Dest: name}
	if tag != "" {
		ext.Tag = strings.Split(tag, ",")
	}
	if exclude != "" {
		ext.Exclude = strings.Split(exclude, ",")
	}
	if include != "" {
		ext.Include = strings.Split(include, ",")
	}
	pkgs, err := load(paths)
	if err != nil {
		return err
	}
	r := strings.NewReplacer("/", "-", ".", "_", "~", "_")
	for _, path := range paths {
		content, err := ext.genContent(path, pkgs[path])
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := os.WriteFile(r.Replace(path)+".go", content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// load returns the type information of the packages at the import paths,
// from export data, by import path.
func load(paths []string) (map[string]*types.Package, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes}
	loaded, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, err
	}
	if packages.PrintErrors(loaded) > 0 {
		return nil, fmt.Errorf("cannot load %s", strings.Join(paths, " "))
	}
	pkgs := map[string]*types.Package{}
	for _, p := range loaded {
		pkgs[p.PkgPath] = p.Types
	}
	for _, path := range paths {
		if pkgs[path] == nil {
			return nil, fmt.Errorf("%s: not loaded (an import path is expected)", path)
		}
	}
	return pkgs, nil
}
