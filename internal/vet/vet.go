// Package vet runs the analyzers of go vet over handler, page and task
// files. Each such file carries //go:build ignore and package main and
// stands alone, so go vet ./... skips it: here each file is type-checked
// as its own package, its imports read from the export data the go
// command builds for the application's module, and the analyzers run
// through a small single-package driver.
package vet

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"github.com/zealgo/zealgo/interp/check"
)

// file is one parsed file with its type errors.
type file struct {
	path string
	ast  *ast.File
}

// Files vets each of paths as a package of its own and returns the
// findings sorted by file and position: syntax and type errors under the
// rule "type", else one per analyzer diagnostic under the analyzer's name.
// dir is the application's root, where the go command resolves imports.
func Files(dir string, paths []string) ([]check.Diagnostic, error) {
	fset := token.NewFileSet()
	var out []check.Diagnostic
	var files []file
	need := map[string]bool{}
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			out = append(out, errDiags(fset, p, err)...)
			continue
		}
		for _, imp := range f.Imports {
			if path, err := strconv.Unquote(imp.Path.Value); err == nil && path != "unsafe" && path != "C" {
				need[path] = true
			}
		}
		files = append(files, file{p, f})
	}
	imp, err := ExportImporter(dir, fset, need)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		d, err := vetFile(fset, imp, f)
		if err != nil {
			return nil, err
		}
		out = append(out, d...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return out, nil
}

// vetFile type-checks one file and runs the analyzers over it.
func vetFile(fset *token.FileSet, imp types.Importer, f file) ([]check.Diagnostic, error) {
	var typeErrs []check.Diagnostic
	conf := types.Config{Importer: imp, Sizes: types.SizesFor("gc", "amd64"), Error: func(err error) {
		var te types.Error
		if errors.As(err, &te) && !te.Soft {
			typeErrs = append(typeErrs, diag(fset, f.path, te.Pos, "type", te.Msg))
		}
	}}
	info := &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Instances:    map[*ast.Ident]types.Instance{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Implicits:    map[ast.Node]types.Object{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		Scopes:       map[ast.Node]*types.Scope{},
		FileVersions: map[*ast.File]string{},
	}
	pkg, _ := conf.Check(f.ast.Name.Name, fset, []*ast.File{f.ast}, info)
	if len(typeErrs) > 0 {
		return typeErrs, nil // the analyzers assume well-typed code
	}
	return run(&unit{fset: fset, file: f, pkg: pkg, info: info, sizes: conf.Sizes})
}

// errDiags turns a parse error into diagnostics.
func errDiags(fset *token.FileSet, path string, err error) []check.Diagnostic {
	var list interface{ Unwrap() []error }
	if !errors.As(err, &list) {
		return []check.Diagnostic{{File: path, Rule: "type", Msg: err.Error()}}
	}
	var out []check.Diagnostic
	for _, e := range list.Unwrap() {
		out = append(out, check.Diagnostic{File: path, Rule: "type", Msg: e.Error()})
	}
	return out
}

// diag makes a diagnostic at pos.
func diag(fset *token.FileSet, path string, pos token.Pos, rule, msg string) check.Diagnostic {
	d := check.Diagnostic{File: path, Rule: rule, Msg: msg}
	if pos.IsValid() {
		p := fset.Position(pos)
		d.Line, d.Col = p.Line, p.Column
	}
	return d
}

// ExportImporter returns an importer of need and their dependencies, read
// from the export data go list -export leaves in the build cache, as the
// application's module (dir) resolves them.
func ExportImporter(dir string, fset *token.FileSet, need map[string]bool) (types.Importer, error) {
	exports := map[string]string{}
	if len(need) > 0 {
		args := []string{"list", "-e", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}"}
		for p := range need {
			args = append(args, p)
		}
		sort.Strings(args[6:])
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("zealgo: vet: go list -export: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if p, f, ok := strings.Cut(line, "="); ok && f != "" {
				exports[p] = f
			}
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("zealgo: vet: no export data for %s (is it required by go.mod?)", path)
		}
		return os.Open(f)
	}), nil
}
