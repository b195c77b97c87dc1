package check

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// The fixes below need the file's types, so they apply only to a file that
// type-checks.

// explicitTypeArgs writes out the inferred type arguments of a call of a
// generic func: Yaegi v0.16 infers some wrongly (a type parameter that
// only a func argument's result or a constraint's core type decides, one
// inside another generic type) and fails with a misleading type error, but
// compiles the call with explicit arguments.
func (fc *fileCheck) explicitTypeArgs(call *ast.CallExpr) {
	var id *ast.Ident
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		id = fun
	case *ast.SelectorExpr:
		id = fun.Sel
	default:
		return // already written out (an index expression), or not a named func
	}
	inst, ok := fc.r.Info.Instances[id]
	if !ok {
		return
	}
	if _, isFunc := fc.r.Info.Uses[id].(*types.Func); !isFunc {
		return
	}
	args := make([]string, inst.TypeArgs.Len())
	for i := range args {
		s, ok := fc.spell(inst.TypeArgs.At(i))
		if !ok {
			fc.report(call.Pos(), "generic-infer", "the interpreter may infer the type arguments of %s wrongly, and this file cannot "+
				"write them out (%s is not a type it can name): pass values of types the file can name, or call it from compiled code",
				types.ExprString(call.Fun), s)
			return
		}
		args[i] = s
	}
	fc.edit(fc.off(call.Fun.End()), fc.off(call.Fun.End()), "["+strings.Join(args, ", ")+"]")
}

// spell writes t as the file can name it, and reports whether it can.
func (fc *fileCheck) spell(t types.Type) (string, bool) {
	ok := true
	s := types.TypeString(t, func(p *types.Package) string {
		if p == fc.pkg {
			return ""
		}
		for local, path := range fc.pkgOf {
			if path == p.Path() && local != "_" && !fc.unlinked[local] {
				if local == "." {
					return ""
				}
				return local
			}
		}
		ok = false
		return p.Name()
	})
	return s, ok && fc.nameable(t, map[types.Type]bool{})
}

// nameable reports whether every named part of t can be written in the
// file: exported names of other packages, package-level types of its own.
func (fc *fileCheck) nameable(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	switch x := t.(type) {
	case *types.Basic:
		return x.Info()&types.IsUntyped == 0
	case *types.Named:
		obj := x.Obj()
		if obj.Pkg() == fc.pkg && obj.Parent() != fc.pkg.Scope() || obj.Pkg() != nil && obj.Pkg() != fc.pkg && !obj.Exported() {
			return false
		}
		for i := 0; i < x.TypeArgs().Len(); i++ {
			if !fc.nameable(x.TypeArgs().At(i), seen) {
				return false
			}
		}
		return true
	case *types.Pointer:
		return fc.nameable(x.Elem(), seen)
	case *types.Slice:
		return fc.nameable(x.Elem(), seen)
	case *types.Array:
		return fc.nameable(x.Elem(), seen)
	case *types.Chan:
		return fc.nameable(x.Elem(), seen)
	case *types.Map:
		return fc.nameable(x.Key(), seen) && fc.nameable(x.Elem(), seen)
	case *types.Signature:
		return fc.nameableTuple(x.Params(), seen) && fc.nameableTuple(x.Results(), seen)
	case *types.Struct:
		for i := 0; i < x.NumFields(); i++ {
			f := x.Field(i)
			if !f.Exported() && f.Pkg() != fc.pkg || !fc.nameable(f.Type(), seen) {
				return false
			}
		}
		return true
	case *types.Interface:
		for i := 0; i < x.NumMethods(); i++ {
			if m := x.Method(i); !m.Exported() && m.Pkg() != fc.pkg {
				return false
			}
		}
		return true
	case *types.TypeParam, *types.Alias:
		return true
	}
	return false
}

func (fc *fileCheck) nameableTuple(t *types.Tuple, seen map[types.Type]bool) bool {
	for i := 0; i < t.Len(); i++ {
		if !fc.nameable(t.At(i).Type(), seen) {
			return false
		}
	}
	return true
}

// hasOwnMethods reports whether t is a type of the file with methods, or
// a pointer to one: the interpreter keeps such a value inside an interface
// slot wrapped, and encoding/json writes the wrapper as {}.
func (fc *fileCheck) hasOwnMethods(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() == fc.pkg && n.NumMethods() > 0
}

// interfaceElem reports whether t is a map, slice or array of interface
// elements.
func interfaceElem(t types.Type) bool {
	if t == nil {
		return false
	}
	switch x := t.Underlying().(type) {
	case *types.Map:
		return types.IsInterface(x.Elem())
	case *types.Slice:
		return types.IsInterface(x.Elem())
	case *types.Array:
		return types.IsInterface(x.Elem())
	}
	return false
}

// A value of the file's types with methods that the interpreter stores in
// an interface slot (an element of a map[string]any or []any) stays
// wrapped, and encoding/json writes the wrapper as {}. Passed through
// RT.Any, it is stored bare: JSON sees its fields, and a type assertion to
// its own type still finds it (one to an interface never does: see the
// assert-interface rule).

// anyElements: map[string]any{"u": u}, []any{u}.
func (fc *fileCheck) anyElements(lit *ast.CompositeLit) {
	if !interfaceElem(fc.typeOf(lit)) {
		return
	}
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			el = kv.Value
		}
		fc.anyValue(el)
	}
}

// anyValue stores e bare when it is a value with methods.
func (fc *fileCheck) anyValue(e ast.Expr) {
	if fc.hasOwnMethods(fc.typeOf(e)) {
		fc.wrap(e, RT+".Any(", ")")
	}
}

// anyAssign: m["u"] = u with m a map[string]any.
func (fc *fileCheck) anyAssign(as *ast.AssignStmt) {
	if len(as.Lhs) != len(as.Rhs) {
		return
	}
	for i, l := range as.Lhs {
		if ix, ok := l.(*ast.IndexExpr); ok && interfaceElem(fc.typeOf(ix.X)) {
			fc.anyValue(as.Rhs[i])
		}
	}
}

// anyArgs: append(s, u) with s a []any.
func (fc *fileCheck) anyArgs(call *ast.CallExpr) {
	id, ok := call.Fun.(*ast.Ident)
	if !ok || id.Name != "append" || call.Ellipsis.IsValid() || len(call.Args) < 2 {
		return
	}
	if _, builtin := fc.r.Info.Uses[id].(*types.Builtin); !builtin || !interfaceElem(fc.typeOf(call.Args[0])) {
		return
	}
	for _, a := range call.Args[1:] {
		fc.anyValue(a)
	}
}

// rangeLoopVars gives each iteration its own copy of the range variables
// that a func literal captures or whose address is taken, as Go 1.22 does
// and Yaegi (Go 1.21 rules) does not.
func (fc *fileCheck) rangeLoopVars(rs *ast.RangeStmt) {
	if rs.Tok != token.DEFINE {
		return
	}
	vars := fc.defined(rs.Key, rs.Value)
	if names := fc.captured(rs.Body, vars, false); len(names) > 0 { // a copy is always safe here
		fc.copyVars(rs.Body, names)
	}
}

// forLoopVars does the same for the variables of a three-clause loop,
// unless the body assigns them (then the copy would not reach the next
// iteration): the rule then reports a variable that outlives its
// iteration, and leaves alone one that does not (the same in both modes).
func (fc *fileCheck) forLoopVars(fs *ast.ForStmt) {
	init, ok := fs.Init.(*ast.AssignStmt)
	if !ok || init.Tok != token.DEFINE {
		return
	}
	vars := fc.defined(init.Lhs...)
	names := fc.captured(fs.Body, vars, false)
	if len(names) == 0 {
		return
	}
	if v := fc.assigned(fs.Body, vars); v != "" {
		if len(fc.captured(fs.Body, vars, true)) == 0 {
			return
		}
		fc.report(fs.Pos(), "loop-var", "a func literal in this loop captures %s, which the interpreter shares between iterations (Go 1.21 rules), "+
			"and the body changes %s, so the host cannot copy it: copy it yourself (v := %s) and capture the copy", v, v, v)
		return
	}
	fc.copyVars(fs.Body, names)
}

// defined returns the variables that the identifiers among es declare.
func (fc *fileCheck) defined(es ...ast.Expr) map[types.Object]bool {
	vars := map[types.Object]bool{}
	for _, e := range es {
		if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
			if obj := fc.r.Info.Defs[id]; obj != nil {
				vars[obj] = true
			}
		}
	}
	return vars
}

// captured returns, in declaration order, the names of vars that a func
// literal in body captures or whose address body takes (&v, &v.f, &v[i]
// of an array, v[:]). With escaping, only those that outlive the
// iteration: captured by a func literal that is not called at once
// (stored, passed, returned, started with go or deferred), or an address
// kept; a closure called where it is written, or an address passed as a
// call's argument, sees its own iteration's variable in both modes. (A
// method value, which Yaegi binds when it is called, is the method-value
// rule's.)
func (fc *fileCheck) captured(body *ast.BlockStmt, vars map[types.Object]bool, escaping bool) []string {
	hit := map[types.Object]bool{}
	walkStack(body, func(n ast.Node, stack []ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			if escaping && calledAtOnce(x, stack) {
				return true // its own nested literals are looked at in turn
			}
			ast.Inspect(x.Body, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok && vars[fc.r.Info.Uses[id]] {
					hit[fc.r.Info.Uses[id]] = true
				}
				return true
			})
			return false
		case *ast.UnaryExpr:
			if x.Op == token.AND {
				fc.keptAddress(x.X, x, stack, vars, hit, escaping)
			}
		case *ast.SliceExpr:
			if _, isArray := under(fc.typeOf(x.X)).(*types.Array); isArray {
				fc.keptAddress(x.X, x, stack, vars, hit, escaping)
			}
		}
		return true
	})
	var names []string
	for obj := range vars {
		if hit[obj] {
			names = append(names, obj.Name())
		}
	}
	sortByPos(names, vars)
	return names
}

// keptAddress marks the var at the root of e whose address use (&e, e[:])
// takes; with escaping, only when the address outlives the statement (it
// is no call's argument).
func (fc *fileCheck) keptAddress(e ast.Expr, use ast.Node, stack []ast.Node, vars, hit map[types.Object]bool, escaping bool) {
	obj := fc.addrRoot(e)
	if obj == nil || !vars[obj] {
		return
	}
	if !escaping || !fc.passedToCall(use, stack) {
		hit[obj] = true
	}
}

// passedToCall reports whether use, whose ancestors are stack, is an
// argument of a call (not append) or the method of a call, outside a go
// or defer statement: f(&v), v.M().
func (fc *fileCheck) passedToCall(use ast.Node, stack []ast.Node) bool {
	if len(stack) == 0 {
		return false
	}
	call, ok := stack[len(stack)-1].(*ast.CallExpr)
	return ok && !fc.isAppend(call) && !underGoDefer(stack) && (call.Fun != use || isSelector(use))
}

func isSelector(n ast.Node) bool {
	_, ok := n.(*ast.SelectorExpr)
	return ok
}

// addrRoot returns the variable whose storage e is: v, v.f of a struct
// value, v[i] of an array value; nil for anything reached through a
// pointer, slice or map.
func (fc *fileCheck) addrRoot(e ast.Expr) types.Object {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return fc.r.Info.Uses[x]
		case *ast.SelectorExpr:
			sel := fc.r.Info.Selections[x]
			if sel == nil || sel.Kind() != types.FieldVal || sel.Indirect() {
				return nil
			}
			e = x.X
		case *ast.IndexExpr:
			if _, isArray := under(fc.typeOf(x.X)).(*types.Array); !isArray {
				return nil
			}
			e = x.X
		default:
			return nil
		}
	}
}

// isAppend reports whether call is the builtin append.
func (fc *fileCheck) isAppend(call *ast.CallExpr) bool {
	id, ok := call.Fun.(*ast.Ident)
	if !ok || id.Name != "append" {
		return false
	}
	_, builtin := fc.r.Info.Uses[id].(*types.Builtin)
	return builtin
}

// calledAtOnce reports whether the func literal lit, whose ancestors are
// stack, is called where it is written (func() { ... }()), outside a go or
// defer statement.
func calledAtOnce(lit *ast.FuncLit, stack []ast.Node) bool {
	var child ast.Node = lit
	for i := len(stack) - 1; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.ParenExpr:
			child = p
			continue
		case *ast.CallExpr:
			return p.Fun == child && !underGoDefer(stack[:i+1])
		}
		return false
	}
	return false
}

// underGoDefer reports whether the innermost node of stack, a call, is
// the call of a go or defer statement.
func underGoDefer(stack []ast.Node) bool {
	if len(stack) < 2 {
		return false
	}
	call := stack[len(stack)-1]
	switch s := stack[len(stack)-2].(type) {
	case *ast.GoStmt:
		return s.Call == call
	case *ast.DeferStmt:
		return s.Call == call
	}
	return false
}

// under returns t's underlying type, or nil.
func under(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	return t.Underlying()
}

// walkStack is ast.Inspect that gives f the ancestors of each node.
func walkStack(root ast.Node, f func(n ast.Node, stack []ast.Node) bool) {
	var stack []ast.Node
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if !f(n, stack) {
			return false
		}
		stack = append(stack, n)
		return true
	})
}

func sortByPos(names []string, vars map[types.Object]bool) {
	pos := map[string]token.Pos{}
	for obj := range vars {
		pos[obj.Name()] = obj.Pos()
	}
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && pos[names[j]] < pos[names[j-1]]; j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
}

// assigned returns the name of a var of vars that body assigns, or "".
func (fc *fileCheck) assigned(body *ast.BlockStmt, vars map[types.Object]bool) string {
	name := ""
	mark := func(e ast.Expr) {
		if id, ok := e.(*ast.Ident); ok && vars[fc.r.Info.Uses[id]] && name == "" {
			name = id.Name
		}
	}
	walkStack(body, func(n ast.Node, stack []ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			for _, l := range x.Lhs {
				mark(l)
			}
		case *ast.IncDecStmt:
			mark(x.X)
		case *ast.UnaryExpr:
			// fmt.Sscan(s, &i) may change i through its address
			if x.Op == token.AND && fc.passedToCall(x, stack) {
				if obj := fc.addrRoot(x.X); obj != nil && vars[obj] && name == "" {
					name = obj.Name()
				}
			}
		}
		return true
	})
	return name
}

// copyVars declares fresh copies of names at the start of body.
func (fc *fileCheck) copyVars(body *ast.BlockStmt, names []string) {
	list := strings.Join(names, ", ")
	at := fc.off(body.Lbrace) + 1
	fc.edit(at, at, " "+list+" := "+list+";")
}
