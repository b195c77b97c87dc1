package interp

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"io/fs"
	"strconv"
	"strings"
	"syscall"
)

// Error is a file that does not compile: where, and why.
type Error struct {
	// File is the path of the file, as given to Compile.
	File string
	// Line and Col locate the problem; both are 0 when it has no position.
	Line, Col int
	// Msg says what is wrong.
	Msg string
	// Importer is set when the problem lies in a file of an application
	// package (see Module) rather than in the file being compiled: it is
	// the path of the compiled file, which imports that package directly
	// or not. File is then the package file's path relative to the
	// module root ("lib/posts/posts.go").
	Importer string
	// Selector is set for "undefined selector", "undefined method" and
	// "undefined field" errors: the name after the dot.
	Selector string
	// Receiver is the expression before the dot of an undefined selector, as
	// written ("api", "api.Res").
	Receiver string
	// ReceiverType is the declared type of Receiver when it is a parameter or
	// variable with an explicit type, spelled with the full import path
	// ("*github.com/zealgo/zealgo/host.API"); empty when unknown.
	ReceiverType string
	// Rule is set when the problem is an interpreter trap that package
	// check names (check.Rules): its ID, e.g. "range-int".
	Rule string
}

// Error returns "file:line:col: message".
func (e *Error) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// selectorAt finds the selector expression .name whose expression starts at
// line:col, which is where Yaegi places "undefined selector" errors.
func selectorAt(fset *token.FileSet, f *ast.File, line, col int, name string) *ast.SelectorExpr {
	var found, fallback *ast.SelectorExpr
	ast.Inspect(f, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != name {
			return true
		}
		p := fset.Position(sel.Pos())
		if p.Line == line && p.Column == col {
			found = sel
			return false
		}
		if s := fset.Position(sel.Sel.Pos()); s.Line == line && fallback == nil {
			fallback = sel
		}
		return true
	})
	if found == nil {
		return fallback
	}
	return found
}

// declaredType returns the declared type of the identifier at the root of
// sel.X when sel.X is a plain identifier declared as a parameter of an
// enclosing function or as a variable with an explicit type. Package
// qualifiers are replaced by their import paths.
func declaredType(f *ast.File, sel *ast.SelectorExpr) string {
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	var typ ast.Expr
	// Walk the enclosing nodes, outermost first: the innermost declaration wins.
	path := enclosing(f, sel)
	for _, n := range path {
		var ft *ast.FuncType
		var body *ast.BlockStmt
		switch fn := n.(type) {
		case *ast.FuncLit:
			ft, body = fn.Type, fn.Body
		case *ast.FuncDecl:
			ft, body = fn.Type, fn.Body
		}
		if ft != nil {
			if t := fieldType(ft.Params, id.Name); t != nil {
				typ = t
			}
		}
		if body != nil {
			for _, st := range body.List {
				if st.Pos() > sel.Pos() {
					break
				}
				if t := varDeclType(st, id.Name); t != nil {
					typ = t
				}
			}
		}
	}
	if typ == nil {
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				if t := specType(gd, id.Name); t != nil {
					typ = t
				}
			}
		}
	}
	if typ == nil {
		return ""
	}
	return qualify(f, typ)
}

func enclosing(f *ast.File, target ast.Node) []ast.Node {
	var stack, path []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if path != nil {
			return false
		}
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if n == target {
			path = append([]ast.Node(nil), stack...)
			return false
		}
		stack = append(stack, n)
		return true
	})
	return path
}

func fieldType(fl *ast.FieldList, name string) ast.Expr {
	if fl == nil {
		return nil
	}
	for _, fld := range fl.List {
		for _, n := range fld.Names {
			if n.Name == name {
				return fld.Type
			}
		}
	}
	return nil
}

func varDeclType(st ast.Stmt, name string) ast.Expr {
	ds, ok := st.(*ast.DeclStmt)
	if !ok {
		return nil
	}
	gd, ok := ds.Decl.(*ast.GenDecl)
	if !ok || gd.Tok != token.VAR {
		return nil
	}
	return specType(gd, name)
}

func specType(gd *ast.GenDecl, name string) ast.Expr {
	for _, s := range gd.Specs {
		vs := s.(*ast.ValueSpec)
		if vs.Type == nil {
			continue
		}
		for _, n := range vs.Names {
			if n.Name == name {
				return vs.Type
			}
		}
	}
	return nil
}

// qualify spells a type expression with import paths instead of package names.
func qualify(f *ast.File, e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return "*" + qualify(f, x.X)
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		if pkg, ok := x.X.(*ast.Ident); ok {
			return importPath(f, pkg.Name) + "." + x.Sel.Name
		}
	}
	return ""
}

func importPath(f *ast.File, name string) string {
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		local := p[strings.LastIndexByte(p, '/')+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == name {
			return p
		}
	}
	return name
}

// unsupported reports language features that Yaegi v0.16 rejects with an
// obscure message or a panic, so that the user gets a clear one.
func unsupported(fset *token.FileSet, path string, f *ast.File) *Error {
	var bad *Error
	ast.Inspect(f, func(n ast.Node) bool {
		if bad != nil {
			return false
		}
		switch x := n.(type) {
		case *ast.RangeStmt:
			switch r := x.X.(type) {
			case *ast.BasicLit:
				if r.Kind == token.INT {
					bad = at(fset, path, x.Pos(), "range over an int is not supported by the interpreter (Go 1.22 rules): use for i := 0; i < n; i++")
					bad.Rule = "range-int"
				}
			case *ast.FuncLit:
				bad = at(fset, path, x.Pos(), "range over a func is not supported by the interpreter: call the func with a yield callback")
				bad.Rule = "range-func"
			}
		case *ast.CallExpr:
			if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "min" || id.Name == "max" || id.Name == "clear") && !declared(f, id.Name) {
				bad = at(fset, path, x.Pos(), "the builtin "+id.Name+" is not supported by the interpreter (Go 1.22 rules)")
				bad.Rule = "builtin"
			}
		}
		return true
	})
	return bad
}

func declared(f *ast.File, name string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncDecl:
			if x.Name.Name == name {
				found = true
			}
		case *ast.ValueSpec:
			for _, id := range x.Names {
				if id.Name == name {
					found = true
				}
			}
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name == name {
						found = true
					}
				}
			}
		case *ast.Field:
			for _, id := range x.Names {
				if id.Name == name {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

func at(fset *token.FileSet, path string, pos token.Pos, msg string) *Error {
	p := fset.Position(pos)
	return &Error{File: path, Line: p.Line, Col: p.Column, Msg: msg}
}

// IsNotFound reports whether err means that a path names no file: it does
// not exist, one of its parents is a regular file (ENOTDIR), or a segment
// is longer than the file system allows (ENAMETOOLONG). A request for such
// a path is a 404, not a server error.
func IsNotFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ENAMETOOLONG)
}
