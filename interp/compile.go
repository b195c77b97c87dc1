// Package interp compiles zealgo handler files with Yaegi.
//
// Each file gets an interpreter of its own: a changed file is compiled into a
// fresh interpreter and swapped in, never re-evaluated into a live one. The
// package knows nothing of the host framework: it is handed the symbol tables
// that interpreted code may import, and the application's module whose
// packages files may import from source (module.go), and it returns the
// file's top-level variables as reflect values.
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
	"github.com/zealgo/zealgo/interp/check"
)

// Exports is a symbol table in the form Yaegi and `yaegi extract` use: import
// path plus package name ("github.com/x/y/y") to exported name to value.
type Exports = map[string]map[string]reflect.Value

// Options configures how files are compiled.
type Options struct {
	// Symbols are the packages, besides the standard library, that
	// interpreted files may import.
	Symbols []Exports
	// Stdout and Stderr receive what interpreted code prints (Yaegi's own
	// per-frame panic lines, whose positions are wrong, are left out: a
	// panic carries its trace instead, trace.go). They default to
	// io.Discard.
	Stdout, Stderr io.Writer
	// GoPanic receives what a goroutine started by interpreted code
	// panicked with, and its stack: such a panic is recovered (see
	// goguard.go) instead of ending the process. A panic that crossed an
	// interpreted frame arrives as a *Trace (Recovered splits it). By
	// default it is written to Stderr. The same holds for a func that
	// interpreted code hands to compiled code which calls it on a goroutine
	// of its own: time.AfterFunc, context.AfterFunc, sync.WaitGroup.Go (see
	// callbacks.go).
	GoPanic func(value any, stack []byte)
	// Module, if set, is the application's own module: the file may
	// import its packages, which are interpreted from source (see Module).
	Module *Module
	// Warn receives each problem that package check finds in a file that
	// compiles, and in the application packages it imports (a trap the
	// file falls into at run time, a type error the interpreter lets
	// through), as "file:line:col: message", at the package file's own
	// position for a package's. By default such problems are dropped;
	// `zealgo check` reports them.
	Warn func(msg string)
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
	if e := checkSource(fset, path, file); e != nil {
		return nil, e
	}
	var pkgs *loader
	if opts.Module != nil {
		pkgs = newLoader(opts, false)
		if e := pkgs.walk(path, file, fset); e != nil {
			return nil, importedBy(e, path)
		}
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

	res := Checker(opts.Symbols).FileWith(path, src, pkgs)
	var lib []check.Diagnostic // the problems of the application packages, fixed in their source
	if pkgs != nil && len(pkgs.files) > 0 {
		lib = pkgs.fix(Checker(opts.Symbols))
	}
	stdout, stderr := opts.Stdout, opts.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	// Env: interpreted code reads the process's environment, as compiled
	// code does (Yaegi's restricted os package reads only this copy).
	yopts := yaegi.Options{Stdout: stdout, Stderr: panicLineFilter{stderr}, Env: os.Environ()}
	imports := importPaths(file)
	if pkgs != nil && len(pkgs.files) > 0 {
		yopts.GoPath, yopts.SourcecodeFilesystem = ".", pkgs.fsys()
		imports = append(imports, pkgs.paths...)
	}
	i := yaegi.New(yopts)
	defer func() {
		if r := recover(); r != nil {
			prog, err = nil, explainLib(&Error{File: path, Msg: "interpreter panic: " + describePanic(r) + hintFor(r)}, res, lib)
		}
	}()
	report := goPanicReport(opts, path, stderr)
	std := stdlibFor(imports)
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
	src, cols, rt := rewrite(fset, file, src, res.Edits, res.UsesRT)
	if rt || (pkgs != nil && pkgs.guarded) { // package files call the guard too
		if err := i.Use(rtSymbols(path, report)); err != nil {
			return nil, fmt.Errorf("interp: runtime of the rewritten code: %w", err)
		}
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
			return nil, explainLib(&Error{File: path, Msg: "interpreter panic: " + describePanic(p.Value) + hintFor(p.Value)}, res, lib)
		}
		if pkgs != nil {
			if e := pkgs.locate(err.Error()); e != nil {
				return nil, importedBy(e, path)
			}
		}
		return nil, explainLib(fromEvalError(path, file, fset, err, cols), res, lib)
	}
	if opts.Warn != nil {
		for _, d := range res.Diagnostics {
			opts.Warn(d.String())
		}
		for _, d := range lib {
			opts.Warn(d.String())
		}
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

// checkSource reports what the interpreter would reject in f, the file
// named path, with a message clearer than its own: legacy build lines, and
// the constructs of unsupported.
func checkSource(fset *token.FileSet, path string, f *ast.File) *Error {
	if pos, ok := legacyBuildLine(f); ok {
		return at(fset, path, pos, "legacy // +build line is not supported; use //go:build")
	}
	return unsupported(fset, path, f)
}

// importedBy marks e, a problem found while compiling the file path, as
// lying in a package that path imports, when it is in another file.
func importedBy(e *Error, path string) *Error {
	if e.File != path {
		e.Importer = path
	}
	return e
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

// fromEvalError turns an error of Yaegi's into an *Error positioned in the
// source as written (cols maps the columns of the rewritten source back).
func fromEvalError(path string, f *ast.File, fset *token.FileSet, err error, cols *colMap) error {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		p := list[0].Pos
		return &Error{File: path, Line: p.Line, Col: cols.col(p.Line, p.Column), Msg: list[0].Msg}
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
	col = cols.col(line, col)
	e := &Error{File: path, Line: line, Col: col, Msg: m[3]}
	e.describeSelector(fset, f)
	return e
}

// describeSelector fills in Selector, Receiver and ReceiverType when e is
// an "undefined selector" (method, field) error in f.
func (e *Error) describeSelector(fset *token.FileSet, f *ast.File) {
	for _, prefix := range []string{"undefined selector: ", "undefined method: ", "undefined field: "} {
		name, ok := strings.CutPrefix(e.Msg, prefix)
		if !ok {
			continue
		}
		e.Selector = name
		if sel := selectorAt(fset, f, e.Line, e.Col, name); sel != nil {
			e.Receiver = exprString(sel.X)
			e.ReceiverType = declaredType(f, sel)
		}
		return
	}
}

func describePanic(r any) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("%T", r)
		}
	}()
	switch v := r.(type) {
	case *Trace:
		return describePanic(v.Value)
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
// interpreted code can be odd (reflect.Value, runtime errors, a *Trace,
// which is described by its value); this never panics itself.
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
