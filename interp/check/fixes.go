package check

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// Some traps the host can make work instead of rejecting them: before a
// file is compiled, it is rewritten (as interp rewrites go statements),
// each edit on the line it replaces so that line numbers hold (columns
// after an edit on its line shift):
//
//	type t struct{ note string }  ->  note string `json:"-"`        json-unexported
//	return x != ""                ->  return (x != "")               compare-return
//	fmt.Errorf("..: %w", err)     ->  fmt.Errorf("..: %w", RT.Err(err))   error-types
//	errors.As(err, &target)       ->  an interpreted loop over the chain  error-types
//	errors.Is, errors.Unwrap      ->  interpreted helpers (files declaring error types)
//	mapf(xs, f)                   ->  mapf[int, string](xs, f)       generic-infer
//	map[string]any{"u": u}        ->  map[string]any{"u": RT.Any(u)} any-methods
//	for _, v := range s { go func() { use(v) }() }  ->  { v := v; ... }  loop-var
//
// RT.Err and RT.Any are compiled identity funcs: passing a value through
// one hands compiled code (fmt, encoding/json) a value it understands.

// RT is the name under which a rewritten file imports the host's run-time
// helpers; the interp package provides them.
const RT = "__zealgo_rt"

// Edit replaces the bytes [Off, End) of the file with Text.
type Edit struct {
	Off, End int
	Text     string
}

// fixes computes the edits of the fixable traps, and reports where a fix
// cannot apply.
func (fc *fileCheck) fixes() {
	f := fc.r.File
	errTypes := declaresErrorType(f)
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.StructType:
			fc.jsonTags(x)
		case *ast.ReturnStmt:
			fc.returnParens(x)
		case *ast.CallExpr:
			if errTypes {
				fc.errorCall(x)
			}
			if fc.r.Typed {
				fc.explicitTypeArgs(x)
				fc.anyArgs(x)
			}
		case *ast.CompositeLit:
			if fc.r.Typed {
				fc.anyElements(x)
			}
		case *ast.AssignStmt:
			if fc.r.Typed {
				fc.anyAssign(x)
			}
		case *ast.RangeStmt:
			if fc.r.Typed {
				fc.rangeLoopVars(x)
			}
		case *ast.ForStmt:
			if fc.r.Typed {
				fc.forLoopVars(x)
			}
		}
		return true
	})
	if fc.helpers {
		fc.edit(len(fc.src), len(fc.src), helperSource(f))
	}
	sort.SliceStable(fc.r.Edits, func(i, j int) bool { return fc.r.Edits[i].Off < fc.r.Edits[j].Off })
}

// helperSource returns the funcs appended to a file whose error calls are
// rewritten. The interpreter cannot assert an error to an interface
// (e.(interface{ Unwrap() error }) is always false), but it can assert it
// to a concrete type of the file, even through the wrapper compiled code
// hands back; so the helpers try each type of the file that has an Unwrap
// or Is method, then compiled errors.Unwrap.
func helperSource(f *ast.File) string {
	var unwrap, is strings.Builder
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
			continue
		}
		recv := types.ExprString(fd.Recv.List[0].Type)
		switch sig := types.ExprString(fd.Type); {
		case fd.Name.Name == "Unwrap" && sig == "func() error":
			fmt.Fprintf(&unwrap, "\tif x, ok := e.(%s); ok {\n\t\treturn x.Unwrap()\n\t}\n", recv)
		case fd.Name.Name == "Is" && strings.HasPrefix(sig, "func(") && strings.HasSuffix(sig, " error) bool"):
			fmt.Fprintf(&is, "\t\tif x, ok := e.(%s); ok && x.Is(target) {\n\t\t\treturn true\n\t\t}\n", recv)
		}
	}
	return "\n\nfunc __zealgo_unwrap(e error) error {\n" + unwrap.String() + "\treturn " + RT + ".Unwrap(e)\n}\n\n" +
		"func __zealgo_is(e, target error) bool {\n\tfor e != nil {\n" +
		"\t\tif " + RT + ".Same(e, target) {\n\t\t\treturn true\n\t\t}\n" + is.String() +
		"\t\te = __zealgo_unwrap(e)\n\t}\n\treturn false\n}\n"
}

func (fc *fileCheck) off(p token.Pos) int { return fc.r.Fset.Position(p).Offset }

func (fc *fileCheck) edit(off, end int, text string) {
	fc.r.Edits = append(fc.r.Edits, Edit{off, end, text})
	if strings.Contains(text, RT+".") {
		fc.r.UsesRT = true
	}
}

// wrap puts e inside open ... close.
func (fc *fileCheck) wrap(e ast.Expr, open, close string) {
	fc.edit(fc.off(e.Pos()), fc.off(e.Pos()), open)
	fc.edit(fc.off(e.End()), fc.off(e.End()), close)
}

// jsonTags gives each unexported field `json:"-"`: the interpreter builds
// struct types whose unexported fields are exported with an X prefix, so
// encoding/json would write them.
func (fc *fileCheck) jsonTags(st *ast.StructType) {
	for _, field := range st.Fields.List {
		if len(field.Names) == 0 {
			continue
		}
		exported := false
		for _, n := range field.Names {
			exported = exported || n.IsExported() || n.Name == "_"
		}
		if exported {
			continue
		}
		if field.Tag == nil {
			fc.edit(fc.off(field.Type.End()), fc.off(field.Type.End()), " `json:\"-\"`")
			continue
		}
		raw, err := strconv.Unquote(field.Tag.Value)
		if err != nil {
			continue
		}
		if tag, changed := hideJSON(raw); changed {
			fc.edit(fc.off(field.Tag.Pos()), fc.off(field.Tag.End()), quoteTag(tag))
		}
	}
}

// hideJSON sets the json key of a struct tag to "-".
func hideJSON(tag string) (string, bool) {
	var pairs []string
	found := false
	rest := strings.TrimSpace(tag)
	for rest != "" {
		key, after, ok := strings.Cut(rest, ":")
		if !ok {
			return tag, false
		}
		val, err := strconv.QuotedPrefix(after)
		if err != nil {
			return tag, false
		}
		rest = strings.TrimSpace(after[len(val):])
		if key == "json" {
			if val == `"-"` {
				return tag, false
			}
			val, found = `"-"`, true
		}
		pairs = append(pairs, key+":"+val)
	}
	if !found {
		pairs = append(pairs, `json:"-"`)
	}
	return strings.Join(pairs, " "), true
}

func quoteTag(tag string) string {
	if strings.Contains(tag, "`") {
		return strconv.Quote(tag)
	}
	return "`" + tag + "`"
}

// returnParens puts a returned comparison or negation in parentheses:
// Yaegi stores such a result into an interface result with SetBool and
// panics; a parenthesized one it converts first.
func (fc *fileCheck) returnParens(ret *ast.ReturnStmt) {
	for _, e := range ret.Results {
		switch x := e.(type) {
		case *ast.BinaryExpr:
			switch x.Op {
			case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
				fc.wrap(e, "(", ")")
			}
		case *ast.UnaryExpr:
			if x.Op == token.NOT {
				fc.wrap(e, "(", ")")
			}
		}
	}
}

// declaresErrorType reports whether f declares a method Error() string.
func declaresErrorType(f *ast.File) bool {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if ok && fd.Recv != nil && fd.Name.Name == "Error" && fd.Type.Params.NumFields() == 0 &&
			fd.Type.Results.NumFields() == 1 && types.ExprString(fd.Type.Results.List[0].Type) == "string" {
			return true
		}
	}
	return false
}

// errorCall rewrites the calls that lose the file's error types: %w of
// fmt.Errorf (compiled fmt sees no Error method on an interpreted value),
// errors.As (compiled reflect sees no Error method on the target),
// errors.Is and errors.Unwrap (no Unwrap or Is method).
func (fc *fileCheck) errorCall(call *ast.CallExpr) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return
	}
	switch fc.pkgOf[id.Name] + "." + sel.Sel.Name {
	case "fmt.Errorf":
		fc.errorfArgs(call)
	case "errors.Unwrap":
		fc.edit(fc.off(call.Fun.Pos()), fc.off(call.Fun.End()), "__zealgo_unwrap")
		fc.helpers = true
	case "errors.Is":
		fc.edit(fc.off(call.Fun.Pos()), fc.off(call.Fun.End()), "__zealgo_is")
		fc.helpers = true
	case "errors.As":
		fc.errorsAs(call)
	}
}

// errorfArgs passes each argument of a %w verb through RT.Err.
func (fc *fileCheck) errorfArgs(call *ast.CallExpr) {
	if len(call.Args) == 0 || call.Ellipsis.IsValid() {
		return
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return
	}
	format, err := strconv.Unquote(lit.Value)
	if err != nil {
		return
	}
	for _, i := range wrapVerbs(format) {
		if i+1 >= len(call.Args) {
			continue
		}
		arg := call.Args[i+1]
		if conv, ok := arg.(*ast.CallExpr); ok && len(conv.Args) == 1 && types.ExprString(conv.Fun) == "error" {
			// error(x): Yaegi fails to hand the converted value on.
			fc.edit(fc.off(conv.Fun.Pos()), fc.off(conv.Fun.End()), RT+".Err")
			fc.r.UsesRT = true
			continue
		}
		fc.wrap(arg, RT+".Err(", ")")
	}
}

// wrapVerbs returns the argument index of each %w of format, or none when
// the format uses explicit indexes.
func wrapVerbs(format string) []int {
	var out []int
	for _, v := range formatVerbs(format) {
		if v.verb == 'w' {
			out = append(out, v.arg)
		}
	}
	return out
}

// errorsAs replaces errors.As, when the target is a type of the file, by
// an interpreted func that walks the chain with a type assertion.
func (fc *fileCheck) errorsAs(call *ast.CallExpr) {
	if !fc.r.Typed || len(call.Args) != 2 {
		return
	}
	ptr, ok := fc.typeOf(call.Args[1]).(*types.Pointer)
	if !ok || !fc.ownType(ptr.Elem()) {
		return
	}
	if _, isPtr := ptr.Elem().(*types.Pointer); !isPtr {
		t := types.TypeString(ptr.Elem(), qualifier(fc.pkg))
		fc.report(call.Pos(), "error-types", "errors.As cannot find a %s held by value under the interpreter: give its Error method a pointer receiver "+
			"(func (e *%s) Error() string), return &%s{...}, and look for it with var target *%s", t, t, t, t)
		return
	}
	q := qualifier(fc.pkg)
	t := types.TypeString(ptr.Elem(), q)
	fc.edit(fc.off(call.Fun.Pos()), fc.off(call.Fun.End()), fmt.Sprintf("func(e error, t *%s) bool { for e != nil { "+
		"if v, ok := e.(%s); ok { *t = v; return true }; e = __zealgo_unwrap(e) }; return false }", t, t))
	fc.helpers = true
}

// ownType reports whether t, or what it points to, is declared in the file.
func (fc *fileCheck) ownType(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() == fc.pkg
}
