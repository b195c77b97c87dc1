package check

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// PackageFile is one file of an application package (lib/...), as the
// interpreter reads it from source.
type PackageFile struct {
	// Path names the file in diagnostics ("lib/posts/posts.go"); it is the
	// file name its positions in the FileSet carry.
	Path string
	// Src is the file's text, File its syntax tree.
	Src  []byte
	File *ast.File
}

// Package checks the files of the application package at import path p
// as File checks a handler file: it type-checks them together, reports
// every error and trap of each file with that file's position, and
// computes each file's rewrites (Result.Edits). s gives the application
// packages that p imports. Package main rules (//go:build ignore, handler
// variables) do not apply.
func (c *Checker) Package(p string, fset *token.FileSet, files []PackageFile, s Sources) []*Result {
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Instances: map[*ast.Ident]types.Instance{},
		Selections: map[*ast.SelectorExpr]*types.Selection{}, Scopes: map[ast.Node]*types.Scope{}}
	imp := newSourceImporter(c.u, s)
	var fcs []*fileCheck
	var asts []*ast.File
	for _, pf := range files {
		r := &Result{Fset: fset, File: pf.File, Info: info, Typed: true}
		fcs = append(fcs, &fileCheck{c: c, r: r, path: pf.Path, src: pf.Src, pkgOf: map[string]string{},
			typeSwitchCases: map[*ast.CaseClause]bool{}, imp: imp})
		asts = append(asts, pf.File)
	}
	for _, fc := range fcs {
		fc.imports()
	}
	var errs []types.Error
	conf := types.Config{Importer: imp, Error: func(err error) {
		if te, ok := err.(types.Error); ok {
			errs = append(errs, te)
		}
	}}
	pkg, _ := conf.Check(p, fset, asts, info)
	typed := true
	for _, e := range errs {
		typed = typed && e.Soft
	}
	st := newPkgState(pkg, info, asts)
	for i, fc := range fcs {
		fc.pkg, fc.r.Typed = pkg, typed
		fc.shadowedBuiltins()
		for _, e := range errs {
			if fset.Position(e.Pos).Filename == fc.path && !fc.isTaken(e.Pos) {
				fc.typeError(e)
			}
		}
		fc.packageRules()
		if typed {
			fc.packageState(st)
		}
		fc.fixes()
		if i > 0 && fc.helpers {
			renameHelpers(fc.r, i)
		}
		fc.r.sort()
	}
	out := make([]*Result, len(fcs))
	for i, fc := range fcs {
		out[i] = fc.r
	}
	return out
}

// packageRules are applyRules less those of a handler file alone: a
// package file is built by go build, so it carries no //go:build ignore.
func (fc *fileCheck) packageRules() {
	saved := fc.r.Diagnostics
	fc.applyRules()
	out := fc.r.Diagnostics[:len(saved)]
	for _, d := range fc.r.Diagnostics[len(saved):] {
		if d.Rule != "build-ignore" {
			out = append(out, d)
		}
	}
	fc.r.Diagnostics = out
}

// renameHelpers gives the error helpers appended to the i-th file of a
// package names of its own: each file of a package appends its own.
func renameHelpers(r *Result, i int) {
	suffix := "_" + strconv.Itoa(i)
	for j, e := range r.Edits {
		t := strings.ReplaceAll(e.Text, "__zealgo_unwrap", "__zealgo_unwrap"+suffix)
		r.Edits[j].Text = strings.ReplaceAll(t, "__zealgo_is", "__zealgo_is"+suffix)
	}
}
