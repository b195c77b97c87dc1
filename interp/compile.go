// Package interp compiles zealgo handler files with Yaegi.
//
// Each file gets an interpreter of its own: a changed file is compiled into a
// fresh interpreter and swapped in, never re-evaluated into a live one. The
// package knows nothing of the host framework: it is handed the symbol tables
// that interpreted code may import and it returns the file's top-level
// variables as reflect values.
package interp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	yaegi "github.com/traefik/yaegi/interp"
)

// Exports is a symbol table in the form Yaegi and `yaegi extract` use: import
// path plus package name ("github.com/x/y/y") to exported name to value.
type Exports = map[string]map[string]reflect.Value

// Options configures how files are compiled.
type Options struct {
	// Symbols are the packages, besides the standard library, that
	// interpreted files may import.
	Symbols []Exports
	// Stdout and Stderr receive what interpreted code prints, and the
	// interpreter's own panic reports. They default to io.Discard.
	Stdout, Stderr io.Writer
	// GoPanic receives what a goroutine started by interpreted code
	// panicked with, and its stack: such a panic is recovered (see
	// goguard.go) instead of ending the process. The same holds for a
	// func that interpreted code hands to compiled code which calls it on
	// a goroutine of its own: time.AfterFunc, context.AfterFunc,
	// sync.WaitGroup.Go (see callbacks.go). By default it is written to
	// Stderr.
	GoPanic func(value any, stack []byte)
	// InitTimeout bounds the file's package-level initialization (var
	// initializers and init funcs run while it compiles): an endless loop
	// there is stopped and reported instead of holding the file's build
	// forever. Default 10s.
	InitTimeout time.Duration
}

// Program is one compiled file: its interpreter, its syntax tree and the
// values of its top-level variables.
type Program struct {
	// Path is the file's path as given to Compile.
	Path string
	// Package is the name in the file's package clause.
	Package string
	// Source is the text that was compiled.
	Source []byte
	// File is the file's syntax tree, positioned in Fset.
	File *ast.File
	// Fset holds the positions of File.
	Fset *token.FileSet

	vars  map[string]reflect.Value
	names []string
	decl  map[string]token.Pos
}

// Var returns the value of the top-level variable name, if the file declares it.
func (p *Program) Var(name string) (reflect.Value, bool) {
	v, ok := p.vars[name]
	return v, ok
}

// Vars returns the names of the file's top-level variables in the order they
// are declared.
func (p *Program) Vars() []string { return p.names }

// Position returns the position of the declaration of the top-level variable
// name, or the zero Position if there is none.
func (p *Program) Position(name string) token.Position {
	pos, ok := p.decl[name]
	if !ok {
		return token.Position{Filename: p.Path}
	}
	return p.Fset.Position(pos)
}

// Compile reads the file at path and compiles it in a new interpreter.
// A compile failure is returned as an *Error.
func Compile(path string, opts Options) (*Program, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("interp: %w", err)
	}
	return CompileSource(path, src, opts)
}

// CompileSource compiles src as the file named path in a new interpreter.
// The interpreter is discarded when compilation fails, and a panic inside
// Yaegi is returned as an *Error.
func CompileSource(path string, src []byte, opts Options) (prog *Program, err error) {
	fset := token.NewFileSet()
	file, perr := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if perr != nil {
		return nil, fromParseError(path, perr)
	}
	if pos, ok := legacyBuildLine(file); ok {
		p := fset.Position(pos)
		return nil, &Error{File: path, Line: p.Line, Col: p.Column,
			Msg: "legacy // +build line is not supported; use //go:build"}
	}
	if e := unsupported(fset, path, file); e != nil {
		return nil, e
	}
	prog = &Program{Path: path, Package: file.Name.Name, Source: src, File: file, Fset: fset,
		vars: map[string]reflect.Value{}, decl: map[string]token.Pos{}}
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, s := range gd.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				if n.Name != "_" {
					prog.names = append(prog.names, n.Name)
					prog.decl[n.Name] = n.Pos()
				}
			}
		}
	}

	stdout, stderr := opts.Stdout, opts.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	i := yaegi.New(yaegi.Options{Stdout: stdout, Stderr: stderr})
	defer func() {
		if r := recover(); r != nil {
			prog, err = nil, &Error{File: path, Msg: "interpreter panic: " + describePanic(r) + hintFor(r)}
		}
	}()
	report := opts.GoPanic
	if report == nil {
		report = func(v any, stack []byte) {
			fmt.Fprintf(stderr, "%s: panic in a goroutine: %s\n%s", path, describePanic(v), stack)
		}
	}
	std := stdlibFor(file)
	if err := i.Use(std); err != nil {
		return nil, fmt.Errorf("interp: standard library symbols: %w", err)
	}
	if err := i.Use(guardCallbacks(std, report)); err != nil {
		return nil, fmt.Errorf("interp: callback guard: %w", err)
	}
	for _, s := range opts.Symbols {
		if err := i.Use(s); err != nil {
			return nil, fmt.Errorf("interp: symbols: %w", err)
		}
	}
	if guarded, ok := guardGoroutines(fset, file, src); ok {
		if err := i.Use(guardSymbols(report)); err != nil {
			return nil, fmt.Errorf("interp: goroutine guard: %w", err)
		}
		src = guarded
	}
	timeout := opts.InitTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := i.EvalWithContext(ctx, string(src)); err != nil {
		var p yaegi.Panic
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return nil, &Error{File: path, Msg: fmt.Sprintf("the file's package-level initialization (var initializers, init funcs) "+
				"did not finish within %v and was stopped: is there an endless loop in it?", timeout)}
		case errors.As(err, &p):
			return nil, &Error{File: path, Msg: "interpreter panic: " + describePanic(p.Value) + hintFor(p.Value)}
		}
		return nil, fromEvalError(path, file, fset, err)
	}
	for _, n := range prog.names {
		v, err := i.Eval(prog.Package + "." + n)
		if err != nil {
			return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read variable %s: %v", n, err)}
		}
		prog.vars[n] = v
	}
	return prog, nil
}

// legacyBuildLine reports the position of a "// +build" line before the
// package clause: Yaegi panics on them.
func legacyBuildLine(f *ast.File) (token.Pos, bool) {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsPlusBuild(c.Text) {
				return c.Pos(), true
			}
		}
	}
	return token.NoPos, false
}

func fromParseError(path string, err error) error {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		e := list[0]
		return &Error{File: path, Line: e.Pos.Line, Col: e.Pos.Column, Msg: e.Msg}
	}
	return &Error{File: path, Msg: err.Error()}
}

var posPrefix = regexp.MustCompile(`^(?:[^:\s]*\.go:)?(\d+):(\d+): (.*)$`)

func fromEvalError(path string, f *ast.File, fset *token.FileSet, err error) error {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return &Error{File: path, Line: list[0].Pos.Line, Col: list[0].Pos.Column, Msg: list[0].Msg}
	}
	msg := strings.TrimSpace(err.Error())
	// Yaegi wraps nested errors one per line; the first line is the cause.
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	m := posPrefix.FindStringSubmatch(msg)
	if m == nil {
		return &Error{File: path, Msg: msg}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	e := &Error{File: path, Line: line, Col: col, Msg: m[3]}
	for _, prefix := range []string{"undefined selector: ", "undefined method: ", "undefined field: "} {
		name, ok := strings.CutPrefix(e.Msg, prefix)
		if !ok {
			continue
		}
		e.Selector = name
		if sel := selectorAt(fset, f, line, col, name); sel != nil {
			e.Receiver = exprString(sel.X)
			e.ReceiverType = declaredType(f, sel)
		}
		break
	}
	return e
}

func describePanic(r any) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("%T", r)
		}
	}()
	switch v := r.(type) {
	case reflect.Value:
		if v.IsValid() && v.CanInterface() {
			return fmt.Sprint(v.Interface())
		}
		return v.String()
	case error:
		return v.Error()
	}
	return fmt.Sprint(r)
}

// DescribePanic turns a recovered value into a one-line message. Values from
// interpreted code can be odd (reflect.Value, runtime errors); this never
// panics itself.
func DescribePanic(r any) string { return describePanic(r) }

func hintFor(r any) string {
	if s := describePanic(r); strings.Contains(s, "nil type") {
		return " (Yaegi does not support range over an int or a func: use a three-clause for loop)"
	}
	return ""
}

func exprString(e ast.Expr) string {
	var b bytes.Buffer
	writeExpr(&b, e)
	return b.String()
}

func writeExpr(b *bytes.Buffer, e ast.Expr) {
	switch x := e.(type) {
	case *ast.Ident:
		b.WriteString(x.Name)
	case *ast.SelectorExpr:
		writeExpr(b, x.X)
		b.WriteByte('.')
		b.WriteString(x.Sel.Name)
	case *ast.StarExpr:
		b.WriteByte('*')
		writeExpr(b, x.X)
	case *ast.ParenExpr:
		b.WriteByte('(')
		writeExpr(b, x.X)
		b.WriteByte(')')
	case *ast.CallExpr:
		writeExpr(b, x.Fun)
		b.WriteString("(...)")
	case *ast.IndexExpr:
		writeExpr(b, x.X)
		b.WriteString("[...]")
	default:
		b.WriteString("?")
	}
}
