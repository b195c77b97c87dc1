package check

import (
	"go/ast"
	"go/token"
	"go/types"
)

// The package-state rule: interpreted, each file that imports an
// application package (lib/...) compiles its own copy of it, with its own
// package variables, initialized again at each reload; built, every file
// shares one. A package variable whose value is computed at run time (a
// random key, the start time) then differs between two endpoints
// interpreted only, and one that a func assigns (an init func, a setter
// that setup.go calls) is set in one file's copy and not in the others'.
// A handler file's own variables are its own in both modes: the rule
// applies to package files only. Values that are the same in every copy
// are quiet: constants, literals, os.Getenv and the like.

// runtimeSources are the packages (path) and funcs (path.name) whose
// results differ at each run: the random sources and the clock.
var runtimeSources = map[string]bool{
	"crypto/rand": true, "math/rand": true, "math/rand/v2": true,
	"github.com/google/uuid.New": true, "github.com/google/uuid.NewString": true,
	"github.com/google/uuid.NewRandom": true, "github.com/google/uuid.NewV7": true,
	"time.Now": true, "time.Since": true, "time.Until": true,
}

// pkgState is what the rule knows of a whole package: its funcs, and the
// package variables its funcs set, each with how.
type pkgState struct {
	pkg      *types.Package
	info     *types.Info
	funcs    map[types.Object]*ast.FuncDecl
	assigned map[types.Object]string
	sources  map[*ast.FuncDecl]string // memo of funcSource: "" for none
	visiting map[*ast.FuncDecl]bool
}

// newPkgState gathers the funcs of the package's files and the package
// variables they set.
func newPkgState(pkg *types.Package, info *types.Info, files []*ast.File) *pkgState {
	st := &pkgState{pkg: pkg, info: info, funcs: map[types.Object]*ast.FuncDecl{}, assigned: map[types.Object]string{},
		sources: map[*ast.FuncDecl]string{}, visiting: map[*ast.FuncDecl]bool{}}
	var decls []*ast.FuncDecl
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				decls = append(decls, fd)
				if obj := info.Defs[fd.Name]; obj != nil {
					st.funcs[obj] = fd
				}
			}
		}
	}
	for _, fd := range decls {
		st.assignments(fd)
	}
	return st
}

// assignments records the package variables that fd sets to a value that
// differs between copies: one computed at run time (key = newKey(),
// rand.Read(key)), one from its parameters (a setter: db = d), or a
// counter (n++, n += k). A value the same in every copy (a template
// parsed lazily) is left alone.
func (st *pkgState) assignments(fd *ast.FuncDecl) {
	params := st.params(fd)
	mark := func(target, value ast.Expr, always bool) {
		id, ok := ast.Unparen(target).(*ast.Ident)
		if !ok {
			return
		}
		v := st.pkgVar(id)
		if v == nil || st.assigned[v] != "" {
			return
		}
		switch src := st.sourceOf(value); {
		case src != "":
			st.assigned[v] = "set by func " + fd.Name.Name + " (" + src + ")"
		case refersTo(st.info, value, params):
			st.assigned[v] = "set by func " + fd.Name.Name + " from its arguments"
		case always:
			st.assigned[v] = "changed by func " + fd.Name.Name
		}
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			for i, l := range x.Lhs {
				switch {
				case x.Tok == token.DEFINE:
				case len(x.Rhs) == len(x.Lhs):
					mark(l, x.Rhs[i], x.Tok != token.ASSIGN)
				default:
					mark(l, x.Rhs[0], false)
				}
			}
		case *ast.IncDecStmt:
			mark(x.X, x.X, true)
		case *ast.CallExpr: // rand.Read(key), json.Unmarshal(b, &cfg)
			fills := st.sourceOf(x.Fun) != ""
			for _, a := range x.Args {
				if u, ok := ast.Unparen(a).(*ast.UnaryExpr); ok && u.Op == token.AND {
					mark(u.X, x, false)
				} else if fills {
					mark(a, x, false)
				}
			}
		}
		return true
	})
}

// params returns the parameters (and receivers) of fd and of the func
// literals in it.
func (st *pkgState) params(fd *ast.FuncDecl) map[types.Object]bool {
	out := map[types.Object]bool{}
	add := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				if obj := st.info.Defs[n]; obj != nil {
					out[obj] = true
				}
			}
		}
	}
	add(fd.Recv)
	ast.Inspect(fd, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok {
			add(ft.Params)
		}
		return true
	})
	return out
}

// refersTo reports whether e uses one of objs.
func refersTo(info *types.Info, e ast.Expr, objs map[types.Object]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && objs[info.Uses[id]] {
			found = true
		}
		return !found
	})
	return found
}

// pkgVar returns the package-level variable id names, or nil.
func (st *pkgState) pkgVar(id *ast.Ident) types.Object {
	v, ok := st.info.Uses[id].(*types.Var)
	if !ok || st.pkg == nil || v.Pkg() != st.pkg || v.Parent() != st.pkg.Scope() {
		return nil
	}
	return v
}

// sourceOf returns the run-time source that n calls or uses, directly or
// through the package's own funcs ("rand.Read", "newKey (rand.Read)"), or "".
func (st *pkgState) sourceOf(n ast.Node) string {
	found := ""
	ast.Inspect(n, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if found != "" || !ok {
			return found == ""
		}
		obj := st.info.Uses[id]
		if obj == nil || obj.Pkg() == nil {
			return true
		}
		if p := obj.Pkg().Path(); runtimeSources[p] || runtimeSources[p+"."+obj.Name()] {
			found = obj.Pkg().Name() + "." + obj.Name()
		} else if fd := st.funcs[obj]; fd != nil {
			if s := st.funcSource(fd); s != "" {
				found = fd.Name.Name + " (" + s + ")"
			}
		}
		return found == ""
	})
	return found
}

// funcSource is sourceOf for the body of one of the package's funcs.
func (st *pkgState) funcSource(fd *ast.FuncDecl) string {
	if s, ok := st.sources[fd]; ok || st.visiting[fd] {
		return s
	}
	st.visiting[fd] = true
	s := st.sourceOf(fd.Body)
	st.sources[fd] = s
	return s
}

// packageState reports the package variables of the file that interpreted
// files would each hold a value of their own of, where built ones share one.
func (fc *fileCheck) packageState(st *pkgState) {
	const advice = "make it once in setup.go and inject it with app.Provide (a value of a standard or compiled type), " +
		"keep it in api.App().KV or the database, or read it from an environment variable (os.Getenv gives every copy " +
		"the same value); docs/modes.md#package-state"
	for _, d := range fc.r.File.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				v := fc.r.Info.Defs[name]
				if v == nil || name.Name == "_" {
					continue
				}
				src := ""
				if i < len(vs.Values) {
					src = st.sourceOf(vs.Values[i])
				} else if len(vs.Values) == 1 {
					src = st.sourceOf(vs.Values[0]) // var a, b = f()
				}
				switch {
				case src != "":
					fc.report(name.Pos(), "package-state", "package variable %s is computed at run time (%s): interpreted, each file "+
						"that imports this package, and each reload, computes a value of its own (a key made here differs between "+
						"two endpoints); built, all share one: %s", name.Name, src, advice)
				case st.assigned[v] != "":
					fc.report(name.Pos(), "package-state", "package variable %s is %s: interpreted, each file that "+
						"imports this package has a copy of its own, and what is set in one copy (by a file, or setup.go) the "+
						"others never see; built, all share one: %s", name.Name, st.assigned[v], advice)
				}
			}
		}
	}
}
