// Package symgen writes the Yaegi symbol table of a Go package: the Go
// file that `yaegi extract` writes, byte for byte, made from the
// package's type information. It loads packages from the compiled export
// data the go command keeps in its build cache (golang.org/x/tools/go/
// packages), where yaegi's extract type-checks each package and all it
// imports, the standard library included, from source: after a build,
// a table takes a fraction of a second instead of tens.
//
// It is zealgo's own code, written from the output of yaegi's extract
// (the tables checked in under symbols/ and the testdata packages'), not
// from yaegi's source.
package symgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/format"
	"go/types"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Format names the output of this package. It changes whenever a table
// it writes for the same package would: callers caching tables key them
// with it.
const Format = "symgen-1 yaegi-v0.16.1"

// Options are what `yaegi extract` takes as flags.
type Options struct {
	// Name is the package name of the generated file (-name).
	Name string
	// Include, if not empty, keeps only the names one of them matches
	// (-include).
	Include []*regexp.Regexp
	// Exclude leaves out the names one of them matches (-exclude).
	Exclude []*regexp.Regexp
	// Tags are the build tags of the generated file, all required (-tag).
	Tags []string
}

// Table is the outcome of one package: its import path, and the table's
// source or why there is none.
type Table struct {
	Path string
	Src  []byte
	Err  error
}

// loadMode loads names and types, the latter from export data.
const loadMode = packages.NeedName | packages.NeedTypes

// Load generates the tables of the packages at paths, in order, loading
// them with the go command run in dir with env (nil: this process's). An
// error is returned only when the go command itself fails; a package
// that does not load has its Err set.
func Load(ctx context.Context, dir string, env []string, opts Options, paths ...string) ([]Table, error) {
	cfg := &packages.Config{Context: ctx, Mode: loadMode, Dir: dir, Env: env}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, fmt.Errorf("zealgo: symgen: %w", err)
	}
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		byPath[p.PkgPath] = p
	}
	out := make([]Table, len(paths))
	for i, path := range paths {
		out[i] = Table{Path: path}
		p := byPath[path]
		switch {
		case p == nil:
			out[i].Err = fmt.Errorf("zealgo: symgen: package %s not loaded", path)
		case len(p.Errors) > 0:
			out[i].Err = fmt.Errorf("zealgo: symgen: %s: %w", path, errors.New(p.Errors[0].Error()))
		case p.Types == nil:
			out[i].Err = fmt.Errorf("zealgo: symgen: %s: no type information", path)
		default:
			out[i].Src, out[i].Err = Generate(p.Types, opts)
		}
	}
	return out, nil
}

// FileName returns the name yaegi's extract gives the table of the
// package at path.
func FileName(path string) string {
	return strings.NewReplacer(".", "_", "/", "-").Replace(path) + ".go"
}

// Generate returns the table of pkg.
func Generate(pkg *types.Package, opts Options) ([]byte, error) {
	w := newWriter(pkg, opts)
	w.collect()
	src := w.file()
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("zealgo: symgen: %s: %w", pkg.Path(), err)
	}
	return out, nil
}

// writer builds one package's table.
type writer struct {
	pkg      *types.Package
	opts     Options
	imports  map[string]bool
	values   []entry // functions, constants, variables
	typs     []entry
	wrappers []entry
	bodies   bytes.Buffer // the wrapper types and methods
}

// entry is one line of the table: a name and its value's expression.
type entry struct{ name, expr string }

func newWriter(pkg *types.Package, opts Options) *writer {
	return &writer{pkg: pkg, opts: opts, imports: map[string]bool{"reflect": true}}
}

// qualify names the package p in a type and records its import.
func (w *writer) qualify(p *types.Package) string {
	w.imports[p.Path()] = true
	return p.Name()
}

// keep reports whether the options keep the name.
func (w *writer) keep(name string) bool {
	if len(w.opts.Include) > 0 && !slices.ContainsFunc(w.opts.Include, func(r *regexp.Regexp) bool { return r.MatchString(name) }) {
		return false
	}
	return !slices.ContainsFunc(w.opts.Exclude, func(r *regexp.Regexp) bool { return r.MatchString(name) })
}

// collect fills the table with the package's exported names, in order.
func (w *writer) collect() {
	scope := w.pkg.Scope()
	for _, name := range scope.Names() { // sorted
		obj := scope.Lookup(name)
		if !obj.Exported() || !w.keep(name) {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			w.values = append(w.values, entry{name, w.constExpr(o)})
		case *types.Var:
			w.values = append(w.values, entry{name, fmt.Sprintf("reflect.ValueOf(&%s).Elem()", w.ref(name))})
		case *types.Func:
			if o.Type().(*types.Signature).TypeParams().Len() == 0 {
				w.values = append(w.values, entry{name, fmt.Sprintf("reflect.ValueOf(%s)", w.ref(name))})
			}
		case *types.TypeName:
			w.typeName(o)
		}
	}
}

// ref returns the qualified name of the package's name.
func (w *writer) ref(name string) string {
	return w.qualify(w.pkg) + "." + name
}

// typeName adds the type o and, for an interface, its wrapper. Generic
// types and constraints (interfaces that embed but have no methods: a
// union, comparable, any) are left out.
func (w *writer) typeName(o *types.TypeName) {
	if generic(o.Type()) {
		return
	}
	iface, _ := types.Unalias(o.Type()).Underlying().(*types.Interface)
	if iface != nil && iface.NumMethods() == 0 && iface.NumEmbeddeds() > 0 {
		return
	}
	name := o.Name()
	w.typs = append(w.typs, entry{name, fmt.Sprintf("reflect.ValueOf((*%s)(nil))", w.ref(name))})
	if iface != nil {
		wrapper := "_" + identOf(w.pkg.Path()) + "_" + name
		w.wrappers = append(w.wrappers, entry{"_" + name, fmt.Sprintf("reflect.ValueOf((*%s)(nil))", wrapper)})
		w.wrapper(wrapper, name, iface)
	}
}

// generic reports whether t has type parameters.
func generic(t types.Type) bool {
	switch t := t.(type) {
	case *types.Named:
		return t.TypeParams().Len() > 0
	case *types.Alias:
		return t.TypeParams().Len() > 0
	}
	return false
}

// identOf turns an import path into a part of an identifier.
func identOf(path string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, path)
}
