package interp

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// The rewrite behind panic traces (trace.go). Every function of the file
// with a body gets, right after its opening brace, a line variable and a
// deferred Mark that records its frame when a panic passes; every
// statement of it gets, before it, the assignment of its line to the
// variable, written at the end of what precedes the statement (the
// previous statement, the opening brace or the case colon), so that the
// statement's own line is not touched; an "else if" gets it as its
// condition's init statement; every return sets it to 0 once its results
// are evaluated (exits). A func started by a go statement left as written
// defers a func literal that recovers instead (GoFrame), and so does a
// function with a return of several results written over several lines.
// Each recover() of the file is wrapped so that it returns the value as
// panicked with. Nothing is inserted across lines, so line numbers hold;
// columns after an insertion on the same line shift, and colMap (edit.go)
// maps them back for compile errors.
//
// Generic functions and methods of generic types are left as written
// (Yaegi's generics are fragile): a panic in one shows as the line of
// the call to it in its caller.
//
// A function in which nothing can panic (mayPanic) is left as written.
//
// Cost: Mark is a compiled call deferred by Yaegi, about 0.5 µs and 8
// allocations per call of a traced function, which returns at once when
// its function returned; the deferred func literal that recovers, which
// the rewrite used before, cost about 3 µs and 21 allocations (Yaegi makes
// a reflect.MakeFunc wrapper and a frame for each deferred literal). The
// line assignments cost about as much as any other assignment of a
// constant.

const (
	lineVar   = "__zealgo_l"
	resultVar = "__zealgo_r"
	markFun   = guardName + ".Mark"
	frameFun  = guardName + ".Frame"
	goFrame   = guardName + ".GoFrame"
	unwrapFn  = guardName + ".Plain"
)

// traceEdits returns the edits that make the functions of f report their
// frames.
func traceEdits(fset *token.FileSet, f *ast.File) []edit {
	tf := fset.File(f.Package)
	if tf == nil || declared(f, "recover") {
		return nil // (the added code calls the builtin recover)
	}
	t := &tracer{fset: fset, off: tf.Offset, names: funcNames(f), goLits: map[*ast.FuncLit]bool{},
		deferLits: map[*ast.FuncLit]bool{}, safe: map[string]bool{}}
	for name := range safeBuiltins {
		if !declared(f, name) {
			t.safe[name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.GoStmt:
			if lit, ok := x.Call.Fun.(*ast.FuncLit); ok && x.Call.Ellipsis.IsValid() {
				t.goLits[lit] = true
			}
		case *ast.DeferStmt:
			if lit, ok := x.Call.Fun.(*ast.FuncLit); ok {
				t.deferLits[lit] = true
			}
		}
		return true
	})
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Body != nil && !isGenericDecl(d) {
				t.function(d.Body, d.Type, t.names[d], frameFun)
			}
		case *ast.GenDecl:
			ast.Inspect(d, t.visitOutside)
		}
	}
	t.recovers(f)
	return t.edits
}

type tracer struct {
	fset      *token.FileSet
	off       func(token.Pos) int
	names     map[ast.Node]string
	goLits    map[*ast.FuncLit]bool // started by a go statement left as written (goguard.go)
	deferLits map[*ast.FuncLit]bool // deferred as written
	safe      map[string]bool       // the builtins that cannot panic, unless the file declares the name
	edits     []edit
}

func (t *tracer) insert(p token.Pos, text string, kind editKind) {
	o := t.off(p)
	t.edits = append(t.edits, edit{o, o, text, kind})
}

func (t *tracer) line(p token.Pos) int { return t.fset.Position(p).Line }

// visitOutside finds the func literals of package-level declarations.
func (t *tracer) visitOutside(n ast.Node) bool {
	if lit, ok := n.(*ast.FuncLit); ok {
		t.function(lit.Body, lit.Type, t.names[lit], t.frameCall(lit))
		return false
	}
	return true
}

// frameCall returns the call that adds the frame of lit to a panic: Frame,
// which panics again, or, for the func of a go statement left as written,
// GoFrame, which reports the panic as the goroutine guard does (a panic
// out of a deferred call would skip the guard's own deferred call in
// Yaegi).
func (t *tracer) frameCall(lit *ast.FuncLit) string {
	if t.goLits[lit] {
		return goFrame
	}
	return frameFun
}

// function instruments the body of one function named name, and the func
// literals inside it; frame is the call its deferred func makes.
func (t *tracer) function(body *ast.BlockStmt, typ *ast.FuncType, name, frame string) {
	if !t.mayPanic(body) {
		// Nothing in it can panic: it is no frame of any trace.
		t.literalsIn(body)
		return
	}
	if frame == frameFun && t.exits(body, typ) {
		t.insert(body.Lbrace+1, fmt.Sprintf(" var %s int; defer %s(&%s, %s);", lineVar, markFun, lineVar, strconv.Quote(name)), editStmt)
	} else {
		t.insert(body.Lbrace+1, fmt.Sprintf(" var %s int; defer func() { if r := recover(); r != nil { %s(r, %s, %s) } }();",
			lineVar, frame, lineVar, strconv.Quote(name)), editStmt)
	}
	clauses := map[*ast.BlockStmt]bool{} // bodies of switch and select: lists of clauses
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			t.literal(x)
			t.function(x.Body, x.Type, t.names[x], t.frameCall(x))
			return false
		case *ast.SwitchStmt:
			clauses[x.Body] = true
		case *ast.TypeSwitchStmt:
			clauses[x.Body] = true
		case *ast.SelectStmt:
			clauses[x.Body] = true
		case *ast.BlockStmt:
			if !clauses[x] {
				t.statements(x.Lbrace+1, x.List)
			}
		case *ast.CaseClause:
			t.statements(x.Colon+1, x.Body)
		case *ast.CommClause:
			t.statements(x.Colon+1, x.Body)
		case *ast.IfStmt:
			if elif, ok := x.Else.(*ast.IfStmt); ok && elif.Init == nil {
				t.insert(elif.If+token.Pos(len("if")), fmt.Sprintf(" %s = %d;", lineVar, t.line(elif.Cond.Pos())), editStmt)
			}
		}
		return true
	})
}

// exits marks the exits of a function that defers Mark (tracemark.go):
// each return statement sets the line variable to 0 once its results are
// evaluated, and so does the end of a function without results, so that
// Mark tells a return from a panic by the variable alone. A return whose
// results cannot panic (mayPanic) sets it first; otherwise its results go
// through variables of the result types, declared, then assigned (Yaegi
// mistypes a generic call's result in a var's initializer, and an untyped
// nil in an assignment of several), on the return's line:
//
//	return x, nil ->   { __zealgo_l = 0; return x, nil }
//	return a, b   ->   { var __zealgo_r0 T0; var __zealgo_r1 T1; __zealgo_r0 = a; __zealgo_r1 = b; __zealgo_l = 0; return __zealgo_r0, __zealgo_r1 }
//	return f()    ->   { var __zealgo_r0 T0; var __zealgo_r1 T1; __zealgo_r0, __zealgo_r1 = f(); __zealgo_l = 0; return __zealgo_r0, __zealgo_r1 }
//
// It reports false, and changes nothing, for a function with a return
// of several results over several lines (their commas would go, and the
// lines with them): that function keeps the deferred func literal.
func (t *tracer) exits(body *ast.BlockStmt, typ *ast.FuncType) bool {
	var results []string
	if typ.Results != nil {
		for _, f := range typ.Results.List {
			for range max(len(f.Names), 1) {
				results = append(results, types.ExprString(f.Type))
			}
		}
	}
	var rets []*ast.ReturnStmt
	ok := true
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			rets = append(rets, x)
			if len(x.Results) > 1 && t.line(x.Results[0].Pos()) != t.line(x.End()) {
				ok = false
			}
		}
		return ok
	})
	if !ok {
		return false
	}
	for _, ret := range rets {
		t.exit(ret, results)
	}
	if len(results) == 0 {
		t.insert(body.Rbrace, fmt.Sprintf("; %s = 0; ", lineVar), editStmt)
	}
	return true
}

// exit rewrites one return statement for exits.
func (t *tracer) exit(ret *ast.ReturnStmt, results []string) {
	kw := t.off(ret.Return)
	if len(ret.Results) == 0 {
		t.edits = append(t.edits, edit{kw, kw + len("return"), fmt.Sprintf("{ %s = 0; return }", lineVar), editStmt})
		return
	}
	if !t.resultsMayPanic(ret) { // nothing to evaluate first
		t.edits = append(t.edits, edit{kw, kw + len("return"), fmt.Sprintf("{ %s = 0; return", lineVar), editStmt})
		t.insert(ret.End(), " }", editStmt)
		return
	}
	var decl, names strings.Builder
	for i, r := range results {
		fmt.Fprintf(&decl, "var %s%d %s; ", resultVar, i, r)
		if i > 0 {
			names.WriteString(", ")
		}
		fmt.Fprintf(&names, "%s%d", resultVar, i)
	}
	if len(ret.Results) < len(results) { // return f() for several results
		decl.WriteString(names.String() + " =")
	} else {
		fmt.Fprintf(&decl, "%s0 =", resultVar)
		for i := 1; i < len(ret.Results); i++ { // the comma before result i
			t.edits = append(t.edits, edit{t.off(ret.Results[i-1].End()), t.off(ret.Results[i].Pos()),
				fmt.Sprintf("; %s%d = ", resultVar, i), editStmt})
		}
	}
	t.edits = append(t.edits, edit{kw, kw + len("return"), "{ " + decl.String(), editStmt})
	t.insert(ret.End(), fmt.Sprintf("; %s = 0; return %s }", lineVar, names.String()), editStmt)
}

// resultsMayPanic reports whether evaluating the results of ret may
// panic (mayPanic).
func (t *tracer) resultsMayPanic(ret *ast.ReturnStmt) bool {
	for _, r := range ret.Results {
		if t.mayPanic(r) {
			return true
		}
	}
	return false
}

// literalsIn traces the func literals inside n, a function that is not
// traced itself.
func (t *tracer) literalsIn(n ast.Node) {
	ast.Inspect(n, func(c ast.Node) bool {
		if lit, ok := c.(*ast.FuncLit); ok {
			t.function(lit.Body, lit.Type, t.names[lit], t.frameCall(lit))
			return false
		}
		return true
	})
}

// mayPanic reports whether anything in body, func literals inside it left
// out, can panic, as far as the syntax tells: a call (but of a builtin
// that cannot), an index, slice, dereference, selector (a nil pointer),
// type assertion, division or shift, a send, or the builtins close, make
// and panic. A function that does none of these (return a + b) needs no
// frame.
func (t *tracer) mayPanic(body ast.Node) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if id, ok := x.Fun.(*ast.Ident); !ok || !t.safe[id.Name] {
				found = true
			}
		case *ast.IndexExpr, *ast.IndexListExpr, *ast.SliceExpr, *ast.StarExpr, *ast.SelectorExpr,
			*ast.TypeAssertExpr, *ast.SendStmt:
			found = true
		case *ast.BinaryExpr:
			switch x.Op {
			case token.QUO, token.REM, token.SHL, token.SHR:
				found = true
			}
		case *ast.AssignStmt:
			switch x.Tok {
			case token.QUO_ASSIGN, token.REM_ASSIGN, token.SHL_ASSIGN, token.SHR_ASSIGN:
				found = true
			}
		}
		return !found
	})
	return found
}

// safeBuiltins are the builtins that never panic.
var safeBuiltins = map[string]bool{"len": true, "cap": true, "append": true, "new": true, "copy": true,
	"delete": true, "print": true, "println": true, "complex": true, "real": true, "imag": true}

// literal makes the func literal lit, inside a traced function, be created
// in a frame of its own: func() T { return lit }(). In Yaegi, a func
// literal locks the frame it was created in each time a call of it ends;
// Frame's panic leaves the frame of a function it passes through locked
// (it ends the function's deferred calls early), so a func literal made in
// that frame and called afterwards (a goroutine it started, a callback it
// stored) would hang at its end. The frame of the added func is never
// locked. (This also mends Yaegi's deadlock on "c := func() {...}; defer
// c()".) A literal deferred as written is left alone: its recover() must
// see the frame that defers it; so is one a go statement left as written
// starts.
func (t *tracer) literal(lit *ast.FuncLit) {
	if t.deferLits[lit] || t.goLits[lit] {
		return // (Yaegi's go statement races on a func made by a call)
	}
	typ := types.ExprString(lit.Type)
	t.insert(lit.Pos(), "func() "+typ+" { return ", editOpen)
	t.insert(lit.End(), " }()", editClose)
}

// statements puts the line of each statement of a list before it: after
// the previous statement's end, or at start (after "{" or ":") for the
// first.
func (t *tracer) statements(start token.Pos, list []ast.Stmt) {
	for i, s := range list {
		if i == 0 {
			t.insert(start, fmt.Sprintf(" %s = %d;", lineVar, t.line(s.Pos())), editStmt)
			continue
		}
		t.insert(list[i-1].End(), fmt.Sprintf("; %s = %d", lineVar, t.line(s.Pos())), editStmt)
	}
}

// recovers wraps every call of the builtin recover.
func (t *tracer) recovers(f *ast.File) {
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "recover" && len(c.Args) == 0 {
			t.insert(c.Pos(), unwrapFn+"(", editOpen)
			t.insert(c.End(), ")", editClose)
		}
		return true
	})
}

// isGenericDecl reports whether d has type parameters or a receiver of a
// generic type.
func isGenericDecl(d *ast.FuncDecl) bool {
	if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
		return true
	}
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return false
	}
	r := d.Recv.List[0].Type
	if s, ok := r.(*ast.StarExpr); ok {
		r = s.X
	}
	switch r.(type) {
	case *ast.IndexExpr, *ast.IndexListExpr:
		return true
	}
	return false
}

// funcNames names every function of f with a body, as traces show them:
// "boom", "(*T).m", "T.m"; the func assigned to a package-level var by the
// var's name ("get"); a func literal inside a function F "F.func1",
// "F.func2" in order, and inside the literal F.func1 "F.func1.1" (the
// names Go's own stack traces use).
func funcNames(f *ast.File) map[ast.Node]string {
	names := map[ast.Node]string{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				name = recvName(d.Recv.List[0].Type) + "." + name
			}
			names[d] = name
			if d.Body != nil {
				nameLiterals(d.Body, name, ".func", names)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				vs, ok := s.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, v := range vs.Values {
					base := "glob"
					if i < len(vs.Names) {
						base = vs.Names[i].Name
					}
					if lit, ok := v.(*ast.FuncLit); ok {
						names[lit] = base
						nameLiterals(lit.Body, base, ".func", names)
						continue
					}
					nameLiterals(v, base, ".func", names)
				}
			}
		}
	}
	return names
}

// nameLiterals names the func literals directly inside n (not those inside
// them, which are named after them) base+sep+N.
func nameLiterals(n ast.Node, base, sep string, names map[ast.Node]string) {
	k := 0
	ast.Inspect(n, func(c ast.Node) bool {
		lit, ok := c.(*ast.FuncLit)
		if !ok {
			return true
		}
		k++
		name := base + sep + strconv.Itoa(k)
		names[lit] = name
		nameLiterals(lit.Body, name, ".", names)
		return false
	})
}

// recvName spells a receiver type as Go's traces do: "(*T)" or "T".
func recvName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		return "(*" + recvName(s.X) + ")"
	}
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	}
	return "?"
}
