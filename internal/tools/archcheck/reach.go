package main

import (
	"go/types"
	"sort"
	"strings"
)

// What a package that imports the measured one compiles because of the
// types it names. A handler file that names *host.API makes the compiler
// read the whole type of everything API leads to: every field and method
// signature, exported or not, of every named type it reaches, and
// compile again each generic instantiation among them. reach walks the
// same graph with go/types, from every exported name of the package.

// reachReport is what the exported names of a package lead to.
type reachReport struct {
	Types     int      // named types reached
	Generic   []string // the generic instantiations among them, sorted
	Forbidden []string // a forbidden type reached, and the path to it, one a line
}

// reachStep is one type of the walk, and the step that led to it.
type reachStep struct {
	t    types.Type
	from *reachStep
	via  string // how from leads to t: ".field", "Type.Method()", "*", ...
}

// path spells the steps from an exported name to s.
func (s *reachStep) path() string {
	var parts []string
	for ; s != nil; s = s.from {
		parts = append(parts, s.via)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, " > ")
}

// forbidden reports whether named type t matches one of the patterns: a
// pattern ending in "/" names the packages under that import path, any
// other one a type, "import/path.Name" (all instantiations of a generic
// one).
func forbidden(t *types.Named, patterns []string) bool {
	obj := t.Origin().Obj()
	if obj.Pkg() == nil {
		return false
	}
	name := obj.Pkg().Path() + "." + obj.Name()
	for _, p := range patterns {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(obj.Pkg().Path()+"/", p) || name == p {
			return true
		}
	}
	return false
}

// reach walks the types that pkg's exported names lead to, breadth
// first, and reports the first path to each forbidden type.
func reach(pkg *types.Package, forbid []string) reachReport {
	var r reachReport
	var queue []*reachStep
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		switch o := scope.Lookup(name).(type) {
		case *types.TypeName:
			if o.Exported() {
				queue = append(queue, &reachStep{t: types.NewPointer(o.Type()), via: name})
			}
		case *types.Func, *types.Var:
			if o.Exported() {
				queue = append(queue, &reachStep{t: o.Type(), via: name})
			}
		}
	}
	seen := map[types.Type]bool{}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		s.t = types.Unalias(s.t)
		if seen[s.t] {
			continue
		}
		seen[s.t] = true
		if n, ok := s.t.(*types.Named); ok {
			r.Types++
			if n.TypeArgs().Len() > 0 {
				r.Generic = append(r.Generic, n.String())
			}
			if forbidden(n, forbid) {
				r.Forbidden = append(r.Forbidden, n.String()+": "+s.path())
				continue // one path is enough: not past it
			}
		}
		for _, next := range typeSteps(s.t) {
			next.from = s
			queue = append(queue, next)
		}
	}
	sort.Strings(r.Generic)
	return r
}

// typeSteps returns the types that t leads to, as the compiler reads
// them: a named type's underlying type and every method's signature; the
// elements of composite types; a struct's fields; a signature's
// parameters and results; an interface's methods.
func typeSteps(t types.Type) []*reachStep {
	var out []*reachStep
	add := func(t types.Type, via string) { out = append(out, &reachStep{t: t, via: via}) }
	switch t := t.(type) {
	case *types.Named:
		add(t.Underlying(), t.Obj().Name())
		for i := 0; i < t.TypeArgs().Len(); i++ {
			add(t.TypeArgs().At(i), "["+t.Obj().Name()+"]")
		}
		for i := 0; i < t.NumMethods(); i++ {
			add(t.Method(i).Type(), t.Obj().Name()+"."+t.Method(i).Name()+"()")
		}
	case *types.Pointer:
		add(t.Elem(), "*")
	case *types.Slice:
		add(t.Elem(), "[]")
	case *types.Array:
		add(t.Elem(), "[N]")
	case *types.Map:
		add(t.Key(), "map key")
		add(t.Elem(), "map value")
	case *types.Chan:
		add(t.Elem(), "chan")
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			add(t.Field(i).Type(), "."+t.Field(i).Name())
		}
	case *types.Signature:
		for i := 0; i < t.Params().Len(); i++ {
			add(t.Params().At(i).Type(), "param")
		}
		for i := 0; i < t.Results().Len(); i++ {
			add(t.Results().At(i).Type(), "result")
		}
	case *types.Interface:
		for i := 0; i < t.NumMethods(); i++ {
			add(t.Method(i).Type(), "."+t.Method(i).Name()+"()")
		}
	}
	return out
}
