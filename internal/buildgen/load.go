package buildgen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// load parses and type-checks the files' packages. The packages they
// import come from the go command's export data, compiled once (and
// cached) for all of them; the files themselves are type-checked from
// source, so that each is compiled once, by the build.
func (g *generator) load(files []*file) ([]*packages.Package, error) {
	fset := token.NewFileSet()
	parsed := make([]*ast.File, len(files))
	imports := map[string]bool{}
	var parseErrs []error
	for i, f := range files {
		path := filepath.Join(g.opts.Dir, filepath.FromSlash(f.pkgDir), "handler.go")
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("zealgo: build: %w", err)
		}
		parsed[i], err = parser.ParseFile(fset, path, src, parser.ParseComments)
		parseErrs = append(parseErrs, err)
		if parsed[i] == nil {
			continue
		}
		for _, imp := range parsed[i].Imports {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil && p != "unsafe" && p != "C" {
				imports[p] = true
			}
		}
	}
	deps, err := g.loadImports(imports)
	if err != nil {
		return nil, err
	}
	out := make([]*packages.Package, len(files))
	for i, f := range files {
		p := &packages.Package{PkgPath: g.importPath(f), Name: "handler", Fset: fset}
		out[i] = p
		if parseErrs[i] != nil {
			p.Errors = append(p.Errors, parseError(fset, parseErrs[i]))
			continue
		}
		p.Syntax = []*ast.File{parsed[i]}
		conf := types.Config{GoVersion: g.goVersion, Sizes: types.SizesFor("gc", runtime.GOARCH),
			Importer: importerFunc(func(path string) (*types.Package, error) {
				if path == "unsafe" {
					return types.Unsafe, nil
				}
				if t := deps[path]; t != nil {
					return t, nil
				}
				return nil, fmt.Errorf("package %s is not in the module's requirements", path)
			}),
			Error: func(err error) {
				var te types.Error
				if errors.As(err, &te) {
					p.Errors = append(p.Errors, packages.Error{Pos: posString(fset.Position(te.Pos)), Msg: te.Msg, Kind: packages.TypeError})
				}
			}}
		p.Types, _ = conf.Check(p.PkgPath, fset, p.Syntax, nil)
	}
	return out, nil
}

// loadImports returns the types of the packages the files import, from
// export data.
func (g *generator) loadImports(imports map[string]bool) (map[string]*types.Package, error) {
	var paths []string
	for p := range imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out := map[string]*types.Package{}
	if len(paths) == 0 {
		return out, nil
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedTypes, Dir: g.goDir(), Env: g.env()}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, fmt.Errorf("zealgo: build: %w", err)
	}
	for _, p := range pkgs {
		if p.Types != nil && len(p.Errors) == 0 {
			out[p.PkgPath] = p.Types
		}
	}
	return out, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// parseError is the first syntax error of err.
func parseError(fset *token.FileSet, err error) packages.Error {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return packages.Error{Pos: posString(list[0].Pos), Msg: list[0].Msg, Kind: packages.ParseError}
	}
	return packages.Error{Msg: err.Error(), Kind: packages.ParseError}
}

func posString(p token.Position) string {
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
}

// langVersion turns a go.mod go line (1.26.8) into a language version
// for go/types (go1.26).
func langVersion(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return ""
	}
	return "go" + parts[0] + "." + parts[1]
}
