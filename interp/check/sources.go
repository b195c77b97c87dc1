package check

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// Sources gives a Checker the application's own packages: those the
// interpreter reads from source instead of from symbol tables.
type Sources interface {
	// Package returns the parsed files of the package at import path p,
	// positioned in fset, and whether p is such a package.
	Package(p string) (fset *token.FileSet, files []*ast.File, ok bool)
}

// sourceImporter imports the packages of Sources by type-checking their
// files, and every other package from the universe. Errors inside a
// source package are not the checked file's: the interpreter reports them
// at the importing file with the package file's own position.
type sourceImporter struct {
	u    *universe
	s    Sources
	pkgs map[string]*types.Package
	busy map[string]bool
}

func newSourceImporter(u *universe, s Sources) *sourceImporter {
	return &sourceImporter{u: u, s: s, pkgs: map[string]*types.Package{}, busy: map[string]bool{}}
}

// Import implements types.Importer.
func (si *sourceImporter) Import(p string) (*types.Package, error) {
	if pkg, ok := si.pkgs[p]; ok {
		return pkg, nil
	}
	if si.s == nil {
		return si.u.Import(p)
	}
	fset, files, ok := si.s.Package(p)
	if !ok {
		return si.u.Import(p)
	}
	if si.busy[p] {
		return nil, fmt.Errorf("import cycle through %s", p)
	}
	si.busy[p] = true
	defer delete(si.busy, p)
	conf := types.Config{Importer: si, Error: func(error) {}}
	pkg, _ := conf.Check(p, fset, files, nil)
	si.pkgs[p] = pkg
	return pkg, nil
}

// links reports whether p can be imported: linked into the binary or one
// of the application's packages.
func (si *sourceImporter) links(p string) bool {
	if si.u.links(p) {
		return true
	}
	if si.s == nil {
		return false
	}
	_, _, ok := si.s.Package(p)
	return ok
}
