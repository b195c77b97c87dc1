package check

import (
	"go/ast"
	"go/build/constraint"
	"go/token"
	"go/types"
	"strings"
)

// Rule is one way in which an interpreted file (a handler, page, task or
// setup file, or a file of an application package, lib/...) behaves
// differently under the interpreter than compiled Go.
type Rule struct {
	// ID names the rule in diagnostics and in the README.
	ID string
	// Limit says what the interpreter does not do, in the README's words.
	Limit string
	// Fixed reports whether the host makes the construct work (it rewrites
	// the file before compiling it, or guards it at run time); the rule
	// then reports only what the fix cannot reach.
	Fixed bool
	// Warning reports whether a file with the problem still runs, only not
	// as compiled Go would; other problems keep the file from compiling or
	// panic when their line runs.
	Warning bool
}

// IsWarning reports whether problems of the rule with id leave the file
// running (see Rule.Warning).
func IsWarning(id string) bool {
	for _, r := range Rules {
		if r.ID == id {
			return r.Warning
		}
	}
	return false
}

// CompiledOnly reports whether d is a construct that compiled Go runs and
// the interpreter cannot (range over an int or a func, the builtins min,
// max and clear, the standard library newer than Go 1.22 or generic funcs
// it cannot run, a package it does not link, type arguments it cannot
// infer): under tiered serve such a file runs compiled only, once a native
// build includes it. A name that is undefined in any Go (a typo the
// checker suggests a fix for) is not.
func CompiledOnly(d Diagnostic) bool {
	return compiledOnly[d.Rule] && !strings.Contains(d.Msg, "; did you mean ")
}

var compiledOnly = map[string]bool{
	"range-int": true, "range-func": true, "builtin": true, "missing-symbol": true,
	"not-linked": true, "generic-infer": true,
}

// Rules are the interpreter's traps, in the order of the README's list of
// what the interpreter does not support.
var Rules = []Rule{
	{"range-int", "range over an int", false, false},
	{"range-func", "range over a func", false, false},
	{"builtin", "the builtins min, max and clear", false, false},
	{"loop-var", "per-iteration loop variables (Go 1.22)", true, true},
	{"not-linked", "packages the interpreter does not link (os/exec, unsafe, syscall, iter, ...)", false, false},
	{"missing-symbol", "names of the standard library newer than Go 1.22 and generic ones it cannot run", false, false},
	{"generic-infer", "inferring some type arguments", true, false},
	{"json-unexported", "unexported fields of the file's structs in JSON", true, true},
	{"json-embedded", "embedded structs of the file in JSON", false, true},
	{"json-method", "MarshalJSON and MarshalText methods of the file's types", false, true},
	{"any-methods", "values with methods inside map[string]any or []any", true, true},
	{"assert-interface", "type assertions of the file's values to an interface", false, false},
	{"compare-return", "returning a comparison through an interface result", true, false},
	{"error-types", "the file's error types with %w, errors.As, errors.Is, errors.Unwrap", true, false},
	{"builtin-shadow", "a handler named like a builtin that the file calls (delete)", false, false},
	{"build-ignore", "a file without //go:build ignore", false, true},
	{"go-panic", "a panic in a goroutine the file starts", true, false},
	{"init-loop", "package-level initialization that never ends", true, false},
	{"defer-eval", "a deferred call's arguments evaluated at the defer statement", false, true},
	{"method-value", "a method value whose receiver changes before it is called", false, true},
	{"embedded-methods", "a struct of the file embedding a compiled type whose methods fmt or encoding/json use", false, true},
	{"fmt-types", "fmt printing the file's types (%T, %#v, %+v, Error and String methods)", false, true},
	{"select-shared", "a select statement run by two requests or goroutines at once", false, true},
	{"package-state", "a package variable of an application package set at run time: one per interpreted file", false, true},
}

// applyRules reports the traps the file falls into.
func (fc *fileCheck) applyRules() {
	fc.buildIgnore()
	fc.modeRules()
	ast.Inspect(fc.r.File, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.RangeStmt:
			fc.rangeRule(x)
		case *ast.CallExpr:
			fc.builtinRule(x)
		case *ast.SelectorExpr:
			fc.brokenSymbol(x)
		case *ast.SelectStmt:
			fc.report(x.Pos(), "select-shared", "the interpreter keeps a select statement's cases once per statement, not per call: "+
				"two requests or goroutines running this select at once may wake on each other's channels; pause a stream with "+
				"s.Wait(d), block in ws.Read, or keep the select in lib/ code that runs compiled (zealgo build, tiered serve)")
		case *ast.TypeSpec:
			fc.embeddedRule(x)
		case *ast.FuncDecl:
			fc.jsonMethodRule(x)
		case *ast.TypeAssertExpr:
			if x.Type != nil {
				fc.assertRule(x.Type)
			}
		case *ast.TypeSwitchStmt:
			for _, c := range x.Body.List {
				fc.typeSwitchCases[c.(*ast.CaseClause)] = true
			}
		case *ast.CaseClause:
			if fc.typeSwitchCases[x] {
				for _, e := range x.List {
					fc.assertRule(e)
				}
			}
		}
		return true
	})
}

// assertRule reports a type assertion (or type switch case) to an
// interface with methods that a type of the file implements: Yaegi never
// matches a value of the file's types against an interface (the assertion
// is false, or panics), though it does match compiled values.
func (fc *fileCheck) assertRule(typ ast.Expr) {
	t := fc.typeOf(typ)
	if t == nil || t == types.Universe.Lookup("error").Type() || fc.pkg == nil {
		return
	}
	it, ok := t.Underlying().(*types.Interface)
	if !ok || it.NumMethods() == 0 {
		return
	}
	for _, name := range fc.pkg.Scope().Names() {
		tn, ok := fc.pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok || types.IsInterface(tn.Type()) {
			continue
		}
		if types.Implements(tn.Type(), it) || types.Implements(types.NewPointer(tn.Type()), it) {
			fc.report(typ.Pos(), "assert-interface", "the interpreter never matches a value of this file's types against an interface "+
				"(the assertion is false, or panics), and %s implements %s: assert to the concrete type (%s) instead",
				name, types.ExprString(typ), name)
			return
		}
	}
}

// buildIgnore reports a file that go build would compile.
func (fc *fileCheck) buildIgnore() {
	f := fc.r.File
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if expr, err := constraint.Parse(c.Text); err == nil && !expr.Eval(func(string) bool { return false }) {
				return
			}
		}
	}
	first := token.Pos(fc.r.Fset.File(f.Package).Base())
	fc.report(first, "build-ignore", "the file lacks //go:build ignore: put it on the first line, followed by a blank line, "+
		"so that go build ./... and go vet ./... skip handler files (gopls still checks them)")
}

// typeOf returns the type of e, or nil when it is unknown.
func (fc *fileCheck) typeOf(e ast.Expr) types.Type {
	if tv, ok := fc.r.Info.Types[e]; ok {
		return tv.Type
	}
	return nil
}

func (fc *fileCheck) rangeRule(x *ast.RangeStmt) {
	isInt, isFunc := false, false
	if t := fc.typeOf(x.X); t != nil {
		if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&types.IsInteger != 0 {
			isInt = true
		}
		_, isFunc = t.Underlying().(*types.Signature)
	} else {
		lit, ok := x.X.(*ast.BasicLit)
		isInt = ok && lit.Kind == token.INT
		_, isFunc = x.X.(*ast.FuncLit)
	}
	switch {
	case isInt:
		fc.report(x.Pos(), "range-int", "range over an int is not supported by the interpreter (Go 1.22 rules): use for i := 0; i < n; i++")
	case isFunc:
		fc.report(x.Pos(), "range-func", "range over a func is not supported by the interpreter: call the func with a yield callback")
	}
}

// builtinRule reports min, max and clear, which Yaegi v0.16 lacks.
func (fc *fileCheck) builtinRule(call *ast.CallExpr) {
	id, ok := call.Fun.(*ast.Ident)
	if !ok {
		return
	}
	if obj, known := fc.r.Info.Uses[id]; known {
		if _, isBuiltin := obj.(*types.Builtin); !isBuiltin {
			return
		}
	} else if fc.r.Typed {
		return
	}
	var instead string
	switch id.Name {
	case "min", "max":
		instead = "compare with an if statement, or write a small func"
	case "clear":
		instead = "delete a map's keys in a range loop (or make a new map), set a slice's elements in a loop"
	default:
		return
	}
	fc.report(call.Pos(), "builtin", "the builtin %s is not supported by the interpreter (Go 1.22 rules): %s", id.Name, instead)
}

// brokenSymbol reports a generic func of the standard library that Yaegi
// has the source of but cannot run.
func (fc *fileCheck) brokenSymbol(sel *ast.SelectorExpr) {
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return
	}
	pn, ok := fc.r.Info.Uses[id].(*types.PkgName)
	if !ok || fc.r.Info.Uses[sel.Sel] == nil {
		return // undefined names are reported with the type errors
	}
	path := pn.Imported().Path()
	if _, generic := fc.c.u.sources[path]; !generic {
		return
	}
	if hint, ok := missingSymbols[path+"."+sel.Sel.Name]; ok {
		fc.report(sel.Pos(), "missing-symbol", "%s.%s is not available in interpreted files (the interpreter cannot run it); %s", id.Name, sel.Sel.Name, hint)
	}
}

// embeddedRule reports a struct of the file that embeds another struct of
// the file: the interpreter encodes the embedded value as a field named
// after its type ("Xbase" for base) instead of promoting its fields.
func (fc *fileCheck) embeddedRule(ts *ast.TypeSpec) {
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return
	}
	for _, field := range st.Fields.List {
		if len(field.Names) > 0 || field.Tag != nil && strings.Contains(field.Tag.Value, `json:"-"`) {
			continue
		}
		t := fc.typeOf(field.Type)
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		n, ok := t.(*types.Named)
		if !ok {
			continue
		}
		if n.Obj().Pkg() != fc.pkg {
			fc.embeddedForeign(ts, field, fc.typeOf(field.Type), n)
			continue
		}
		if _, isStruct := n.Underlying().(*types.Struct); !isStruct {
			continue
		}
		name := n.Obj().Name()
		key := name
		if !token.IsExported(name) {
			key = "X" + name
		}
		fc.report(field.Pos(), "json-embedded", "in JSON, the interpreter encodes the embedded %s as a field %q instead of promoting its fields "+
			"into %s: declare those fields in %s itself, or give the field a name and a json tag", name, key, ts.Name.Name, ts.Name.Name)
	}
}

// jsonMethodRule reports MarshalJSON and MarshalText methods of the file's
// types, which encoding/json (compiled) never sees.
func (fc *fileCheck) jsonMethodRule(fd *ast.FuncDecl) {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return
	}
	switch fd.Name.Name {
	case "MarshalJSON", "MarshalText", "UnmarshalJSON", "UnmarshalText":
	default:
		return
	}
	recv := types.ExprString(fd.Recv.List[0].Type)
	fc.report(fd.Name.Pos(), "json-method", "encoding/json does not call methods of types declared in interpreted files, so %s.%s is never used: "+
		"return a map[string]any (or a struct of exported fields with json tags) shaped as the JSON you want", strings.TrimPrefix(recv, "*"), fd.Name.Name)
}

// shadowedBuiltins reports calls of a package-level variable that hides a
// builtin (a mode 2 handler named delete, a mode 1 file named len.go): Go
// resolves them to the variable, with a confusing type error.
func (fc *fileCheck) shadowedBuiltins() {
	ast.Inspect(fc.r.File, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		id, ok := call.Fun.(*ast.Ident)
		if !ok {
			return true
		}
		v, ok := fc.r.Info.Uses[id].(*types.Var)
		if !ok || fc.pkg == nil || v.Parent() != fc.pkg.Scope() {
			return true
		}
		if _, builtin := types.Universe.Lookup(id.Name).(*types.Builtin); !builtin {
			return true
		}
		fc.takeRange(call.Pos(), call.End())
		fc.takeRange(v.Pos(), v.Pos()+token.Pos(len(v.Name()))) // "initialization cycle" when the call is inside it
		line := fc.r.Fset.Position(v.Pos()).Line
		what, instead := "the handler of this file", "rename the file (its URL follows its name), or move this code into another file"
		if id.Name == "delete" {
			what, instead = "the DELETE handler", "remove map keys with maps.DeleteFunc(m, func(k K, _ V) bool { return k == key }) instead"
		}
		fc.report(call.Pos(), "builtin-shadow", "%s here calls var %s (%s, line %d), which hides the builtin %s in this file: %s",
			types.ExprString(call.Fun)+"(...)", id.Name, what, line, id.Name, instead)
		return true
	})
}

// takeRange marks the type errors in [from, to) as explained by a rule.
func (fc *fileCheck) takeRange(from, to token.Pos) {
	fc.takenRanges = append(fc.takenRanges, [2]token.Pos{from, to})
}

func (fc *fileCheck) isTaken(p token.Pos) bool {
	for _, r := range fc.takenRanges {
		if p >= r[0] && p < r[1] {
			return true
		}
	}
	return false
}
