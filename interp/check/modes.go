package check

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// Rules for what runs in both modes but not alike: interpreted (Yaegi)
// and built (zealgo build, the Go compiler). They are warnings: the file
// is valid, it only prints or computes something else. docs/modes.md
// lists them with the rest of the differences.

// modeRules applies the rules that need a node's ancestors.
func (fc *fileCheck) modeRules() {
	if !fc.r.Typed {
		return
	}
	walkStack(fc.r.File, func(n ast.Node, stack []ast.Node) bool {
		switch x := n.(type) {
		case *ast.DeferStmt:
			fc.deferEval(x, stack)
		case *ast.CallExpr:
			fc.fmtTypes(x)
		case *ast.SelectorExpr:
			fc.methodValue(x, stack)
		}
		return true
	})
}

// deferEval reports a deferred call that Yaegi evaluates late: it reads a
// deferred call's variable arguments and receiver when the call runs, not
// at the defer statement (measured: x := 1; defer rec(x); x = 3 records
// 3), and in a loop even a func literal's captured variables and computed
// arguments are those of the last iteration.
func (fc *fileCheck) deferEval(d *ast.DeferStmt, stack []ast.Node) {
	loop, fn := enclosing(stack)
	if fn == nil {
		return
	}
	var late []string
	seen := map[types.Object]bool{}
	mark := func(v *types.Var) {
		if !seen[v] {
			seen[v] = true
			late = append(late, v.Name())
		}
	}
	inLoop := func(v *types.Var) bool { return loop != nil && v.Pos() >= loop.Pos() && v.Pos() < loop.End() }
	ast.Inspect(d.Call, func(n ast.Node) bool {
		if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.AND {
			if _, ok := u.X.(*ast.Ident); ok {
				return false // &x: the address does not change
			}
		}
		if _, ok := n.(*ast.Ident); ok && n == d.Call.Fun {
			return false // f(): a func value, read at the defer statement
		}
		if lit, ok := n.(*ast.FuncLit); ok && n == ast.Unparen(d.Call.Fun) {
			fc.capturedIn(lit, func(v *types.Var) {
				if inLoop(v) {
					mark(v)
				}
			})
			return false
		}
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		if v, ok := fc.r.Info.Uses[id].(*types.Var); ok && fc.changesLater(v, d, loop, fn, true) {
			mark(v)
		}
		return true
	})
	if len(late) == 0 {
		return
	}
	list := strings.Join(late, ", ")
	fc.report(d.Pos(), "defer-eval", "interpreted, this deferred call sees the last value of %s, which changes after the defer statement "+
		"(in a loop, every iteration's call sees the last iteration's); built, Go evaluates it at the defer statement: "+
		"capture it in a closure first, f := func() { ... }; defer f() (the host copies the loop variables a closure captures), "+
		"or run the loop's body in a func of its own", list)
}

// changesLater reports whether the local variable v may hold another
// value when a deferred call or a method value at n runs than at n:
// declared in the loop around n, or assigned from n on (its fields and
// elements too, when fields is set).
func (fc *fileCheck) changesLater(v *types.Var, n ast.Node, loop ast.Node, fn *ast.BlockStmt, fields bool) bool {
	if v.IsField() || v.Parent() == nil || fc.pkg == nil || v.Parent() == fc.pkg.Scope() {
		return false
	}
	if loop != nil && v.Pos() >= loop.Pos() && v.Pos() < loop.End() {
		return true
	}
	return fc.assignedAfter(fn, n, n.End(), v, fields) || loop != nil && fc.assignedAfter(loop, n, loop.Pos(), v, fields)
}

// methodValue reports a method value (x.M, not called where it is
// written) whose receiver changes before it is called: Yaegi evaluates
// the receiver when the method value is called (measured: p := vp{1};
// m := p.Get; p = vp{5}; m() gives 5 interpreted, 1 built; in a loop,
// every iteration's method value calls the last element's method).
func (fc *fileCheck) methodValue(sel *ast.SelectorExpr, stack []ast.Node) {
	s := fc.r.Info.Selections[sel]
	if s == nil || s.Kind() != types.MethodVal || len(stack) == 0 {
		return
	}
	parent := stack[len(stack)-1]
	if call, ok := parent.(*ast.CallExpr); ok && call.Fun == sel || fc.passedToCall(sel, stack) {
		return // called at once, or handed to a call that uses it now
	}
	loop, fn := enclosing(stack)
	if fn == nil {
		return
	}
	valueRecv := true
	if sig, ok := s.Obj().Type().(*types.Signature); ok && sig.Recv() != nil {
		_, ptr := sig.Recv().Type().(*types.Pointer)
		valueRecv = !ptr
	}
	var late []string
	seen := map[types.Object]bool{}
	ast.Inspect(sel.X, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if v, ok := fc.r.Info.Uses[id].(*types.Var); ok && !seen[v] && fc.changesLater(v, sel, loop, fn, valueRecv) {
				seen[v] = true
				late = append(late, v.Name())
			}
		}
		return true
	})
	if len(late) == 0 {
		return
	}
	fc.report(sel.Pos(), "method-value", "interpreted, the method value %s reads its receiver when it is called, and %s changes "+
		"after this line (in a loop, every iteration's method value calls the last one's); built, Go binds the receiver here: "+
		"write a closure that calls %s(...) instead (the host copies the loop variables a closure captures), "+
		"or take the method value of a variable that does not change", types.ExprString(sel), strings.Join(late, ", "),
		types.ExprString(sel))
}

// enclosing returns the outermost loop of the innermost func of stack,
// and that func's body.
func enclosing(stack []ast.Node) (loop ast.Node, body *ast.BlockStmt) {
	for i := len(stack) - 1; i >= 0; i-- {
		switch x := stack[i].(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			loop = x
		case *ast.FuncLit:
			return loop, x.Body
		case *ast.FuncDecl:
			return loop, x.Body
		}
	}
	return loop, nil
}

// capturedIn calls f with each variable that lit uses and does not declare.
func (fc *fileCheck) capturedIn(lit *ast.FuncLit, f func(*types.Var)) {
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if v, ok := fc.r.Info.Uses[id].(*types.Var); ok && !v.IsField() && (v.Pos() < lit.Pos() || v.Pos() >= lit.End()) {
				f(v)
			}
		}
		return true
	})
}

// assignedAfter reports whether body assigns v (or an element or field of
// it, when fields is set), or takes its address, from the position from
// on, outside skip.
func (fc *fileCheck) assignedAfter(body ast.Node, skip ast.Node, from token.Pos, v *types.Var, fields bool) bool {
	found := false
	is := func(e ast.Expr) bool {
		for {
			switch x := e.(type) {
			case *ast.Ident:
				return fc.r.Info.Uses[x] == v
			case *ast.IndexExpr:
				if !fields {
					return false
				}
				e = x.X
			case *ast.SelectorExpr:
				if !fields {
					return false
				}
				e = x.X
			case *ast.StarExpr:
				if !fields {
					return false
				}
				e = x.X
			case *ast.ParenExpr:
				e = x.X
			default:
				return false
			}
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if found || n == nil {
			return false
		}
		if n.Pos() < from || n == skip {
			return n != skip
		}
		switch x := n.(type) {
		case *ast.AssignStmt:
			for _, l := range x.Lhs {
				found = found || is(l)
			}
		case *ast.IncDecStmt:
			found = found || is(x.X)
		case *ast.UnaryExpr:
			found = found || x.Op == token.AND && is(x.X)
		}
		return !found
	})
	return found
}

// fmtFormat gives the index of the format argument of the formatting
// funcs of fmt and log, by "path.Name"; fmtPrint the index of the first
// printed argument of their funcs without a format.
var (
	fmtFormat = map[string]int{"fmt.Printf": 0, "fmt.Sprintf": 0, "fmt.Errorf": 0, "fmt.Fprintf": 1, "fmt.Appendf": 1,
		"log.Printf": 0, "log.Fatalf": 0, "log.Panicf": 0}
	fmtPrint = map[string]int{"fmt.Print": 0, "fmt.Println": 0, "fmt.Sprint": 0, "fmt.Sprintln": 0, "fmt.Fprint": 1,
		"fmt.Fprintln": 1, "fmt.Append": 1, "fmt.Appendln": 1, "log.Print": 0, "log.Println": 0, "log.Fatal": 0,
		"log.Fatalln": 0, "log.Panic": 0, "log.Panicln": 0}
)

// fmtTypes reports values of the file's types that fmt (and log) prints otherwise
// interpreted than built: the interpreter gives fmt (compiled) a value of
// a type it built at run time (reflect.StructOf), without the type's name
// or methods. Measured with Yaegi v0.16.1 (testdata/traps/api/fmt_*.go).
func (fc *fileCheck) fmtTypes(call *ast.CallExpr) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || call.Ellipsis.IsValid() {
		return
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return
	}
	pn, isPkg := fc.r.Info.Uses[id].(*types.PkgName)
	if !isPkg {
		return
	}
	fun := pn.Imported().Path() + "." + sel.Sel.Name
	if first, ok := fmtPrint[fun]; ok {
		for _, a := range call.Args[min(first, len(call.Args)):] {
			fc.fmtArg(a, 'v', "")
		}
		return
	}
	fi, ok := fmtFormat[fun]
	if !ok || fi >= len(call.Args) {
		return
	}
	tv := fc.r.Info.Types[call.Args[fi]]
	if tv.Value == nil {
		return
	}
	for _, v := range formatVerbs(constantString(tv)) {
		if i := fi + 1 + v.arg; i < len(call.Args) {
			fc.fmtArg(call.Args[i], v.verb, v.flags)
		}
	}
}

func constantString(tv types.TypeAndValue) string {
	s, err := strconv.Unquote(tv.Value.ExactString())
	if err != nil {
		return ""
	}
	return s
}

// fmtArg reports one argument printed with verb (and its flags).
func (fc *fileCheck) fmtArg(a ast.Expr, verb byte, flags string) {
	t := fc.typeOf(a)
	if t == nil || types.IsInterface(t) {
		return // an interface value (error, fmt.Stringer, any) is printed alike
	}
	name, own := fc.ownNamed(t)
	switch {
	case own && verb == 'T':
		fc.report(a.Pos(), "fmt-types", "%%T of %s prints main.%s built, but the structure of the type interpreted "+
			"(struct { ... }, or a wrapper's name): print a name of your own instead", name, name)
	case own && verb == 'v' && strings.Contains(flags, "#") && (isStruct(t) || hasMethod(t, "String")):
		fc.report(a.Pos(), "fmt-types", "%%#v of %s prints main.%s{...} built, but struct { ... }{...} interpreted: "+
			"print the fields you want with %%v, or build the text yourself", name, name)
	case own && verb == 'v' && strings.Contains(flags, "+") && hasUnexported(t):
		fc.report(a.Pos(), "fmt-types", "%%+v of %s names its unexported fields with an X prefix interpreted (Xname:...), "+
			"as declared built: print them with %%v, or name them yourself", name)
	case own && strings.IndexByte("dboxXeEfFgGcU", verb) >= 0 && hasMethod(t, "String") && !isPointer(t):
		// a type with a String method reaches fmt wrapped as a fmt.Stringer
		fc.report(a.Pos(), "fmt-types", "%%%c of %s, a type with a String method, prints the interpreter's wrapper ({3 5461472}) "+
			"interpreted: convert it first (%%%c with int(x), float64(x), ...)", verb, name, verb)
	case strings.IndexByte("vsq", verb) >= 0:
		fc.fmtMethods(a, t)
	}
}

// fmtMethods reports a value whose Error method fmt calls built but not
// interpreted, or elements whose String or Error methods it misses.
func (fc *fileCheck) fmtMethods(a ast.Expr, t types.Type) {
	if name, own := fc.ownNamed(t); own && hasMethod(t, "Error") {
		fc.report(a.Pos(), "fmt-types", "fmt calls the Error method of this %s built, but prints its fields interpreted (&{...}): "+
			"print it as an error value (var err error = x) or call its Error method", name)
		return
	}
	if name := fc.innerMethods(t, 0, map[types.Type]bool{}); name != "" {
		fc.report(a.Pos(), "fmt-types", "fmt calls the String or Error method of each %s inside this value (element or field) built, "+
			"but not interpreted: print those one by one, or build the text yourself", name)
	}
}

// innerMethods returns the name of a type of the file with a String or
// Error method inside t (an element, or an exported field: fmt calls no
// method of an unexported one), below the top level.
func (fc *fileCheck) innerMethods(t types.Type, depth int, seen map[types.Type]bool) string {
	if t == nil || seen[t] {
		return ""
	}
	seen[t] = true
	if name, own := fc.ownNamed(t); own && depth > 0 && (hasMethod(t, "String") || hasMethod(t, "Error")) {
		return name
	}
	switch x := under(t).(type) {
	case *types.Pointer:
		return fc.innerMethods(x.Elem(), depth, seen)
	case *types.Slice:
		return fc.innerMethods(x.Elem(), depth+1, seen)
	case *types.Array:
		return fc.innerMethods(x.Elem(), depth+1, seen)
	case *types.Map:
		return fc.innerMethods(x.Elem(), depth+1, seen)
	case *types.Struct:
		for i := 0; i < x.NumFields(); i++ {
			if f := x.Field(i); f.Exported() {
				if name := fc.innerMethods(f.Type(), depth+1, seen); name != "" {
					return name
				}
			}
		}
	}
	return ""
}

// ownNamed returns the name of t, or of what t points to, when the file
// declares it.
func (fc *fileCheck) ownNamed(t types.Type) (string, bool) {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || fc.pkg == nil || n.Obj().Pkg() != fc.pkg {
		return "", false
	}
	return n.Obj().Name(), true
}

// hasMethod reports whether t (or *t) has the method name.
func hasMethod(t types.Type, name string) bool {
	if _, isPtr := t.(*types.Pointer); !isPtr {
		t = types.NewPointer(t)
	}
	ms := types.NewMethodSet(t)
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Obj().Name() == name {
			return true
		}
	}
	return false
}

// isStruct reports whether t, or what it points to, is a struct.
func isStruct(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	_, ok := under(t).(*types.Struct)
	return ok
}

func isPointer(t types.Type) bool {
	_, ok := t.(*types.Pointer)
	return ok
}

// hasUnexported reports whether t, or what it points to, is a struct with
// an unexported field.
func hasUnexported(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	s, ok := under(t).(*types.Struct)
	if !ok {
		return false
	}
	for i := 0; i < s.NumFields(); i++ {
		if f := s.Field(i); !f.Exported() && f.Name() != "_" {
			return true
		}
	}
	return false
}

// fmtVerb is one verb of a format, with its flags and argument index.
type fmtVerb struct {
	arg   int
	verb  byte
	flags string
}

// formatVerbs returns the verbs of format, or none when it uses explicit
// argument indexes.
func formatVerbs(format string) []fmtVerb {
	var out []fmtVerb
	arg := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		start := i
		for i < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[i]) >= 0 {
			switch format[i] {
			case '*':
				arg++
			case '[':
				return nil
			}
			i++
		}
		if i >= len(format) || format[i] == '%' {
			continue
		}
		out = append(out, fmtVerb{arg: arg, verb: format[i], flags: format[start:i]})
		arg++
	}
	return out
}

// printMethods are the methods through which fmt and encoding/json
// print a value.
var printMethods = []string{"MarshalJSON", "MarshalText", "String", "Error", "Format", "GoString"}

// embeddedForeign reports a struct of the file that embeds a type of
// another package (typ, the field's type; n, the named type in it). The
// interpreter promotes none of its methods to what compiled code sees:
// fmt and encoding/json panic on a value of the struct ("method not
// found: Format", measured with an embedded time.Time), where built Go
// uses the promoted method; and JSON nests an embedded struct's fields
// under its name instead of promoting them.
func (fc *fileCheck) embeddedForeign(ts *ast.TypeSpec, field *ast.Field, typ types.Type, n *types.Named) {
	name := types.TypeString(n, qualifier(fc.pkg))
	outer := ts.Name.Name
	ms := types.NewMethodSet(typ)
	for _, m := range printMethods {
		if ms.Lookup(n.Obj().Pkg(), m) == nil && ms.Lookup(nil, m) == nil {
			continue
		}
		fc.report(field.Pos(), "embedded-methods", "%s embeds %s, whose %s method built Go promotes (fmt and encoding/json use it); "+
			"interpreted, printing or encoding a %s value stops with \"method not found\" or ignores the method: give the field a name "+
			"(%s %s) and call its methods through it", outer, name, m, outer, n.Obj().Name(), types.TypeString(typ, qualifier(fc.pkg)))
		return
	}
	if _, isStruct := n.Underlying().(*types.Struct); !isStruct {
		return
	}
	fc.report(field.Pos(), "json-embedded", "in JSON, the interpreter encodes the embedded %s as a field %q instead of promoting its "+
		"exported fields into %s, as built Go does: declare those fields in %s itself, or give the field a name and a json tag",
		name, n.Obj().Name(), outer, outer)
}
