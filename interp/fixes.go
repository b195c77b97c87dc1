package interp

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/zealgo/zealgo/interp/check"
)

// fixSymbols are the run-time helpers that the rewrites of package check
// call (see check/fixes.go), beside the goroutine guard's.
var fixSymbols = map[string]reflect.Value{
	// Err hands compiled code (fmt's %w, errors) an interpreted error as a
	// value with an Error method: passed as an error parameter, Yaegi wraps
	// it; passed as an any, it would hand over the bare struct.
	"Err": reflect.ValueOf(func(e error) error { return e }),
	// Any hands over the bare value of an interpreted type with methods,
	// which Yaegi otherwise keeps wrapped inside an interface slot, where
	// encoding/json sees {}.
	"Any":    reflect.ValueOf(func(v any) any { return v }),
	"Unwrap": reflect.ValueOf(errors.Unwrap),
	"Same":   reflect.ValueOf(sameError),
}

// sameError reports whether a and b are the same error value, looking
// through Yaegi's wrapper of interpreted values (a struct whose first
// field IValue holds the value), as errors.Is compares.
func sameError(a, b error) bool {
	x, y := bareError(a), bareError(b)
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	t := reflect.TypeOf(x)
	return t == reflect.TypeOf(y) && t.Comparable() && x == y
}

func bareError(e error) any {
	v := reflect.ValueOf(e)
	if v.Kind() == reflect.Struct && v.NumField() > 0 && v.Type().Field(0).Name == "IValue" && v.Field(0).CanInterface() {
		return v.Field(0).Interface()
	}
	if e == nil {
		return nil
	}
	return e
}

// checkers are the Checkers of the symbol sets compiled against, by the
// identity of their tables: building the packages of a set is done once.
var checkers = struct {
	sync.Mutex
	m map[string]*check.Checker
}{m: map[string]*check.Checker{}}

// Checker returns the Checker of the standard library and tables, shared
// by every compile against the same tables.
func Checker(tables []Exports) *check.Checker {
	var key strings.Builder
	for _, t := range tables {
		fmt.Fprintf(&key, "%p,", t)
	}
	checkers.Lock()
	defer checkers.Unlock()
	c, ok := checkers.m[key.String()]
	if !ok {
		c = check.New(tables...)
		checkers.m[key.String()] = c
	}
	return c
}

// explain puts the words of package check on a failure of the
// interpreter: a panic without a position (a file that forgot to import
// host) takes the first problem of the file that keeps it from compiling;
// a failure at a line takes a trap that the checker names on that line (a
// name the symbol tables lack, a package not linked, a builtin hidden by a
// handler).
func explain(err error, res *check.Result) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	for _, d := range res.Diagnostics {
		if d.Line == 0 || !compileRules[d.Rule] {
			continue
		}
		trap := d.Rule != "type" && d.Rule != "syntax"
		if e.Line == 0 || trap && d.Line == e.Line {
			return &Error{File: e.File, Line: d.Line, Col: d.Col, Msg: d.Msg, Rule: d.Rule}
		}
	}
	return err
}

// compileRules are the rules of package check whose problems keep a file
// from compiling under the interpreter (the others show when the line
// runs, or not at all).
var compileRules = map[string]bool{
	"syntax": true, "type": true, "not-linked": true, "missing-symbol": true, "builtin-shadow": true,
	"range-int": true, "range-func": true, "builtin": true, "generic-infer": true,
}

// goPanicReport is what a recovered goroutine panic is given to:
// Options.GoPanic, or by default a line on stderr naming the file.
func goPanicReport(opts Options, path string, stderr io.Writer) func(any, []byte) {
	if opts.GoPanic != nil {
		return opts.GoPanic
	}
	return func(v any, stack []byte) {
		fmt.Fprintf(stderr, "%s: panic in a goroutine: %s\n%s", path, describePanic(v), stack)
	}
}

// CheckFile runs package check over the file at path, whose text is src,
// as CompileSource does: the application packages it imports
// (Options.Module) are type-checked from source. A package that cannot be
// loaded (a syntax error, an import cycle, a missing package) is the one
// problem reported, in the words CompileSource would use. The problems of
// the packages follow the file's own, each at its package file's position.
func CheckFile(path string, src []byte, opts Options) *check.Result {
	c := Checker(opts.Symbols)
	if opts.Module == nil {
		return c.File(path, src)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
	if err != nil {
		return c.File(path, src) // the syntax error, in check's words
	}
	pkgs := newLoader(opts, false)
	pkgs.checking = true
	if e := pkgs.walk(path, f, fset); e != nil {
		return &check.Result{Diagnostics: []check.Diagnostic{{File: path, Rule: "import", Msg: e.Error()}}}
	}
	lib := pkgs.fix(c)
	r := c.FileWith(path, src, pkgs)
	r.Diagnostics = append(r.Diagnostics, lib...)
	return r
}
