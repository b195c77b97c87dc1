package interp

import (
	"go/ast"
	"go/token"
	"reflect"
	"runtime/debug"

	"github.com/zealgo/zealgo/interp/check"
)

// Goroutines started by interpreted code run outside any recover of the
// host: a panic in one would end the whole server. Before a file is
// evaluated, each go statement is rewritten so that a panic in the
// goroutine is recovered and reported (Options.GoPanic) instead:
//
//	go f(a, b)                  ->  __zealgo_rt.Go(f, a, b)
//	go func(x int) { ... }(v)   ->  __zealgo_rt.Go(func(x int) { ... }, v)
//	go func(xs ...int) { ... }(ys...)
//	    ->  go func(xs ...int) { defer func() { __zealgo_rt.Recovered(recover()) }(); ... }(ys...)
//	wg.Go(func() { ... })      ->  wg.Go(__zealgo_rt.Guard(func() { ... }))
//
// The arguments are evaluated where the go statement stood, as Go
// requires, and the compiled Go starts the goroutine that calls f with
// them inside a recover. (It is a plain call, not "go __zealgo_rt.Go(...)":
// Yaegi hands a compiled func started with go references to loop
// variables, not their values at the statement.) A func literal that
// spreads a slice into its call keeps its go statement and gets the
// deferred recover instead. Each rewrite stays on the line it replaces,
// so that line numbers in errors hold (edit.go maps the columns back). A
// go statement calling a builtin, or any other func spreading a slice
// into a variadic call (f(xs...)), is left as written.

// guardPath is the import path of the per-interpreter package the
// rewritten statements call; guardName is the name they import it as.
const (
	guardPath = "github.com/zealgo/zealgo/interp/rt"
	guardName = check.RT
)

// goEdits returns the edits that rewrite every go statement of f to
// recover its panics.
func goEdits(fset *token.FileSet, f *ast.File) []edit {
	tf := fset.File(f.Package)
	if tf == nil {
		return nil
	}
	off := func(p token.Pos) int { return tf.Offset(p) }
	var edits []edit
	ast.Inspect(f, func(n ast.Node) bool {
		if lit := guardedMethodArg(n); lit != nil { // recovered by compiled code, as Go's are
			edits = append(edits, edit{off(lit.Pos()), off(lit.Pos()), guardName + ".Guard(", editOpen},
				// editStmt: after whatever closes the literal itself (tracerw.go)
				edit{off(lit.End()), off(lit.End()), ")", editStmt})
			return true
		}
		g, ok := n.(*ast.GoStmt)
		if !ok {
			return true
		}
		call := g.Call
		switch fun := call.Fun.(type) {
		case *ast.FuncLit:
			if call.Ellipsis.IsValid() {
				at := off(fun.Body.Lbrace) + 1
				edits = append(edits, edit{at, at, " defer func() { " + guardName + ".Recovered(recover()) }();", editStmt})
				return true
			}
		case *ast.Ident:
			if builtins[fun.Name] && !declared(f, fun.Name) {
				return true
			}
		}
		if call.Ellipsis.IsValid() {
			return true
		}
		lp := off(call.Lparen)
		sep := ""
		if len(call.Args) > 0 {
			sep = ", "
		}
		edits = append(edits,
			edit{off(g.Go), off(g.Go) + len("go"), "", editStmt},
			edit{off(call.Fun.Pos()), off(call.Fun.Pos()), guardName + ".Go(", editOpen},
			edit{lp, lp + 1, sep, editClose})
		return true
	})
	return edits
}

// guardedMethods are the methods of compiled types that run the func they
// are given on a goroutine of their own: sync.WaitGroup.Go and
// http.Server.RegisterOnShutdown. Methods cannot be replaced in the symbol
// table as functions are (callbacks.go), so in a call x.Go(func() { ... })
// the literal is wrapped in a compiled func that recovers its panic. The method's
// type is not known here: a method of the file's own named Go that runs
// its func() argument at once would also have a panic in it recovered
// and reported instead of passed on to its caller.
var guardedMethods = map[string]bool{"Go": true, "RegisterOnShutdown": true}

// guardedMethodArg returns the func literal of n when n is a call of one of
// guardedMethods with a single func() literal as its argument, else nil.
func guardedMethodArg(n ast.Node) *ast.FuncLit {
	call, ok := n.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || !guardedMethods[sel.Sel.Name] {
		return nil
	}
	lit, ok := call.Args[0].(*ast.FuncLit)
	if !ok || lit.Type.Params.NumFields() != 0 || lit.Type.Results.NumFields() != 0 {
		return nil
	}
	return lit
}

// builtins are the predeclared funcs a go statement may call; they cannot
// be passed as values.
var builtins = map[string]bool{
	"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true,
	"delete": true, "imag": true, "len": true, "make": true, "max": true, "min": true, "new": true,
	"panic": true, "print": true, "println": true, "real": true, "recover": true,
}

// rtSymbols returns the package that the rewritten code of the file at
// path calls: the goroutine guard (report receives what a goroutine
// panicked with, a *Trace once it crossed an interpreted frame, and its
// stack) and the frames of panic traces (trace.go).
func rtSymbols(path string, report func(value any, stack []byte)) Exports {
	recovered := func(p any) {
		if p != nil {
			report(p, debug.Stack())
		}
	}
	goCall := func(fn any, args ...any) {
		go func() {
			defer func() { recovered(recover()) }()
			callDynamic(fn, args)
		}()
	}
	syms := map[string]reflect.Value{
		"Recovered": reflect.ValueOf(recovered),
		"Go":        reflect.ValueOf(goCall),
		"Guard": reflect.ValueOf(func(f func()) func() {
			return func() {
				defer func() { recovered(recover()) }()
				f()
			}
		}),
		"Frame":   reflect.ValueOf(frameFunc(path)),
		"Mark":    reflect.ValueOf(markFunc(path)),
		"GoFrame": reflect.ValueOf(goFrameFunc(path, recovered)),
		"Plain":   reflect.ValueOf(unwrapValue),
	}
	for k, v := range fixSymbols {
		syms[k] = v
	}
	return Exports{guardPath + "/rt": syms}
}

// callDynamic calls fn with args, converting each to the parameter type
// where Go would have (an untyped constant passed as any arrives with its
// default type: 1 is an int even for an int64 parameter; nil arrives as an
// invalid value).
func callDynamic(fn any, args []any) {
	fv := reflect.ValueOf(fn)
	ft := fv.Type()
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		var pt reflect.Type
		switch {
		case ft.IsVariadic() && i >= ft.NumIn()-1:
			pt = ft.In(ft.NumIn() - 1).Elem()
		default:
			pt = ft.In(i)
		}
		v := reflect.ValueOf(a)
		switch {
		case !v.IsValid():
			v = reflect.Zero(pt)
		case v.Type() != pt && !v.Type().AssignableTo(pt) && v.Type().ConvertibleTo(pt):
			v = v.Convert(pt)
		}
		in[i] = v
	}
	fv.Call(in)
}
