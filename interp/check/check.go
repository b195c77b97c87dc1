// Package check finds what keeps a zealgo handler, page or task file from
// running under the interpreter, before it is served.
//
// A Checker type-checks a file with go/types against the packages the
// binary links (the standard library Yaegi carries and the symbol tables
// the application registers, which the Checker is given: it knows nothing
// of the host), reports every error of the file, and then applies a rule
// for each interpreter trap it can see statically (see Rules). Each
// problem is a Diagnostic, "file:line:col: message", that says what to
// write instead.
package check

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Exports is a symbol table in the form Yaegi and `yaegi extract` use:
// "importpath/name" to exported name to value.
type Exports = map[string]map[string]reflect.Value

// Checker checks files against one set of linked packages. It is safe for
// concurrent use; the packages it builds are kept for the next file.
type Checker struct {
	u *universe
}

// New returns a Checker for a binary that links the standard library (as
// Yaegi carries it) and the packages of tables.
func New(tables ...Exports) *Checker {
	return &Checker{u: newUniverse(tables)}
}

// Diagnostic is one problem of a file.
type Diagnostic struct {
	// File is the path as given to the Checker.
	File string `json:"file"`
	// Line and Col locate the problem (1-based); Col is 0 when only the
	// line is known, and both are 0 when the problem has no position.
	Line int `json:"line"`
	Col  int `json:"col"`
	// Rule names the check that found it: "syntax", "type", or the ID of
	// one of Rules.
	Rule string `json:"rule"`
	// Msg says what is wrong and what to write instead.
	Msg string `json:"message"`
}

// String returns "file:line:col: message" (or "file:line: message",
// "file: message" with less position).
func (d Diagnostic) String() string {
	switch {
	case d.Line == 0:
		return d.File + ": " + d.Msg
	case d.Col == 0:
		return fmt.Sprintf("%s:%d: %s", d.File, d.Line, d.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, d.Msg)
}

// Result is what checking one file found.
type Result struct {
	// Diagnostics are the problems, sorted by position.
	Diagnostics []Diagnostic
	// Fset, File and Info are the file's syntax tree and types; File is nil
	// when the file does not parse, and Info is incomplete when the file
	// has type errors.
	Fset *token.FileSet
	File *ast.File
	Info *types.Info
	// Typed reports whether the file type-checked without error, so that
	// Info is complete.
	Typed bool
	// Edits rewrite the file so that the traps the host fixes work (see
	// fixes.go), sorted by offset; UsesRT reports whether they call the
	// run-time helpers imported as RT.
	Edits  []Edit
	UsesRT bool
}

// File checks the source of one file; path names it in the diagnostics
// (e.g. "api/users.go").
func (c *Checker) File(path string, src []byte) *Result {
	return c.FileWith(path, src, nil)
}

// FileWith is File for a file that may import the application's own
// packages, which s gives.
func (c *Checker) FileWith(path string, src []byte, s Sources) *Result {
	r := &Result{Fset: token.NewFileSet()}
	f, err := parser.ParseFile(r.Fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		r.syntax(path, err)
		return r
	}
	r.File = f
	r.Info = &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Instances: map[*ast.Ident]types.Instance{},
		Selections: map[*ast.SelectorExpr]*types.Selection{}, Scopes: map[ast.Node]*types.Scope{}}
	fc := &fileCheck{c: c, r: r, path: path, src: src, pkgOf: map[string]string{}, typeSwitchCases: map[*ast.CaseClause]bool{},
		imp: newSourceImporter(c.u, s)}
	fc.typeCheck()
	fc.applyRules()
	fc.fixes()
	r.sort()
	return r
}

func (r *Result) syntax(path string, err error) {
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		r.Diagnostics = append(r.Diagnostics, Diagnostic{File: path, Rule: "syntax", Msg: err.Error()})
		return
	}
	for _, e := range list {
		r.Diagnostics = append(r.Diagnostics, Diagnostic{File: path, Line: e.Pos.Line, Col: e.Pos.Column, Rule: "syntax", Msg: e.Msg})
	}
}

func (r *Result) sort() {
	d := r.Diagnostics
	sort.SliceStable(d, func(i, j int) bool {
		if d[i].Line != d[j].Line {
			return d[i].Line < d[j].Line
		}
		return d[i].Col < d[j].Col
	})
	// One message per position and rule.
	out := d[:0]
	for i, x := range d {
		if i > 0 && x == d[i-1] {
			continue
		}
		out = append(out, x)
	}
	r.Diagnostics = out
}

// fileCheck is the state of checking one file.
type fileCheck struct {
	c    *Checker
	r    *Result
	path string
	src  []byte
	pkg  *types.Package
	// helpers reports whether the fixes call the helper funcs appended to
	// the file.
	helpers bool
	// imp imports the file's packages: linked, or the application's own.
	imp *sourceImporter
	// pkgOf maps the file's local package names to import paths.
	pkgOf map[string]string
	// unlinked are the local names of imports that the binary lacks.
	unlinked map[string]bool
	// typeSwitchCases are the case clauses of type switches.
	typeSwitchCases map[*ast.CaseClause]bool
	// takenRanges hold type errors that a rule explains better.
	takenRanges [][2]token.Pos
}

// report adds a diagnostic at pos.
func (fc *fileCheck) report(pos token.Pos, rule, format string, args ...any) {
	p := fc.r.Fset.Position(pos)
	fc.r.Diagnostics = append(fc.r.Diagnostics, Diagnostic{File: fc.path, Line: p.Line, Col: p.Column, Rule: rule,
		Msg: fmt.Sprintf(format, args...)})
}

// typeCheck runs go/types over the file and reports every error, in the
// words of the rules where one applies.
func (fc *fileCheck) typeCheck() {
	fc.imports()
	var errs []types.Error
	conf := types.Config{Importer: fc.imp, Error: func(err error) {
		if te, ok := err.(types.Error); ok {
			errs = append(errs, te)
		}
	}}
	fc.pkg, _ = conf.Check(fc.r.File.Name.Name, fc.r.Fset, []*ast.File{fc.r.File}, fc.r.Info)
	fc.r.Typed = true
	for _, e := range errs {
		fc.r.Typed = fc.r.Typed && e.Soft
	}
	fc.shadowedBuiltins()
	for _, e := range errs {
		if fc.isTaken(e.Pos) {
			continue
		}
		fc.typeError(e)
	}
}

// imports records the file's imports and reports those the binary lacks.
func (fc *fileCheck) imports() {
	fc.unlinked = map[string]bool{}
	for _, im := range fc.r.File.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		local := p[strings.LastIndexByte(p, '/')+1:]
		if major := strings.TrimPrefix(local, "v"); major != local && major != "" && strings.Trim(major, "0123456789") == "" &&
			strings.Count(p, "/") > 1 {
			rest := p[:strings.LastIndexByte(p, '/')] // example.com/pgx/v5 is package pgx
			local = rest[strings.LastIndexByte(rest, '/')+1:]
		}
		if name, ok := fc.c.u.names[p]; ok {
			local = name
		}
		if im.Name != nil {
			local = im.Name.Name
		}
		fc.pkgOf[local] = p
		if !fc.imp.links(p) {
			fc.unlinked[local] = true
			fc.report(im.Path.Pos(), "not-linked", "%s", unlinkedMsg(p))
		}
	}
}

// typeError reports one error of go/types.
func (fc *fileCheck) typeError(e types.Error) {
	msg := e.Msg
	switch {
	case e.Soft && (strings.Contains(msg, "imported and not used") || strings.Contains(msg, "declared and not used") ||
		strings.Contains(msg, "defined and not used")):
		return // the interpreter runs such a file as written
	case strings.HasPrefix(msg, "could not import "):
		return // reported by imports
	case strings.HasPrefix(msg, "undefined: "):
		if fc.unlinked[strings.TrimPrefix(msg, "undefined: ")] {
			return // the name of an unlinked package, reported at its import
		}
		if fc.undefinedQualified(e) {
			return
		}
	case strings.Contains(msg, " undefined (type "):
		if fc.missingMember(e) {
			return
		}
	}
	p := fc.r.Fset.Position(e.Pos)
	fc.r.Diagnostics = append(fc.r.Diagnostics, Diagnostic{File: fc.path, Line: p.Line, Col: p.Column, Rule: "type", Msg: msg})
}

// undefinedQualified reports "undefined: pkg.Name" in the words of the
// missing-symbol rule, and reports whether it did.
func (fc *fileCheck) undefinedQualified(e types.Error) bool {
	sel := fc.selectorAt(e.Pos)
	if sel == nil {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	p, ok := fc.pkgOf[id.Name]
	if !ok || fc.unlinked[id.Name] {
		return ok // an unlinked package is reported once, at its import
	}
	pkg, err := fc.imp.Import(p)
	if err != nil {
		return false
	}
	fc.report(sel.Pos(), "missing-symbol", "%s", missingMsg(id.Name, p, sel.Sel.Name, pkg))
	return true
}

// missingMember reports "x.f undefined (type T has no field or method f)"
// as "x.f is no method or field of T; did you mean g?", at x.
func (fc *fileCheck) missingMember(e types.Error) bool {
	sel := fc.selectorAt(e.Pos)
	if sel == nil {
		return false
	}
	tv, ok := fc.r.Info.Types[sel.X]
	if !ok || tv.Type == nil {
		return false
	}
	name := sel.Sel.Name
	msg := fmt.Sprintf("%s.%s is no method or field of %s", types.ExprString(sel.X), name, types.TypeString(tv.Type, qualifier(fc.pkg)))
	if hint, ok := newerMembers[types.TypeString(tv.Type, nil)+"."+name]; ok {
		msg += ": " + hint
	} else if s := Suggest(name, memberNames(tv.Type)); s != "" {
		msg += "; did you mean " + s + "?"
	}
	fc.report(sel.Pos(), "type", "%s", msg)
	return true
}

// selectorAt returns the selector expression whose name is at pos.
func (fc *fileCheck) selectorAt(pos token.Pos) *ast.SelectorExpr {
	var found *ast.SelectorExpr
	ast.Inspect(fc.r.File, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		if s, ok := n.(*ast.SelectorExpr); ok && s.Sel.Pos() == pos {
			found = s
		}
		return true
	})
	return found
}

// qualifier names packages by name, and the file's own not at all.
func qualifier(own *types.Package) types.Qualifier {
	return func(p *types.Package) string {
		if p == own {
			return ""
		}
		return p.Name()
	}
}

// memberNames lists the exported fields and methods of t.
func memberNames(t types.Type) []string {
	var out []string
	ms := types.NewMethodSet(t)
	for i := 0; i < ms.Len(); i++ {
		if o := ms.At(i).Obj(); o.Exported() {
			out = append(out, o.Name())
		}
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if s, ok := t.Underlying().(*types.Struct); ok {
		for i := 0; i < s.NumFields(); i++ {
			if f := s.Field(i); f.Exported() {
				out = append(out, f.Name())
			}
		}
	}
	return out
}

// Suggest returns the candidate closest to typed by case-insensitive
// Levenshtein distance, or "" when it is over 3 or over 40% of typed's
// length: the rule of the host's did_you_mean, and of check's own hints.
func Suggest(typed string, candidates []string) string {
	best, bestD := "", -1
	lt := strings.ToLower(typed)
	for _, c := range candidates {
		if d := levenshtein(lt, strings.ToLower(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > 3 || float64(bestD) > 0.4*float64(len([]rune(typed))) {
		return ""
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Preload builds the linked packages at the import paths now, as the
// first file that imports each would: that file is then checked as fast
// as the next one. Paths the binary does not link are skipped. It
// returns how many of them it built or already held.
func (c *Checker) Preload(paths ...string) int {
	n := 0
	for _, p := range paths {
		if !c.u.links(p) {
			continue
		}
		if _, err := c.u.Import(p); err == nil {
			n++
		}
	}
	return n
}
