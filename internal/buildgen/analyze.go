package buildgen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/zealgo/zealgo/internal/routepat"
)

// analyze type-checks every file's package and writes its registration.
// A file that does not compile fails the build, or with KeepGoing is
// registered with its error and left out of the program.
func (g *generator) analyze() error {
	var todo []*file
	byPath := map[string]*file{}
	for _, f := range g.files {
		if f.err == "" {
			todo = append(todo, f)
			byPath[g.importPath(f)] = f
		}
	}
	pkgs, err := g.load(todo)
	if err != nil {
		return err
	}
	if pkgs, err = g.blankUnused(pkgs, byPath); err != nil {
		return err
	}
	for _, p := range pkgs {
		g.check(byPath[p.PkgPath], p)
	}
	var problems []string
	for _, f := range g.files {
		if f.err == "" {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s:%d:%d: %s", f.rel, f.errLine, f.errCol, f.err))
		if err := g.remove(f.pkgDir); err != nil {
			return err
		}
	}
	if len(problems) > 0 && !g.opts.KeepGoing {
		return fmt.Errorf("zealgo: build: files that do not compile:\n\t%s", strings.Join(problems, "\n\t"))
	}
	for _, p := range pkgs {
		if f := byPath[p.PkgPath]; f != nil && f.err == "" {
			if err := g.writeRegistration(f, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// unusedImport matches go/types' message for an unused import.
var unusedImport = regexp.MustCompile(`imported (as \w+ )?and not used$`)

// blankUnused imports as _ the packages that a file imports and does not
// use, which the interpreter lets through and the Go compiler refuses,
// says so, and loads those files again.
func (g *generator) blankUnused(pkgs []*packages.Package, byPath map[string]*file) ([]*packages.Package, error) {
	var again []*file
	for _, p := range pkgs {
		f := byPath[p.PkgPath]
		if f == nil || len(p.Errors) == 0 {
			continue
		}
		var lines []int
		for _, e := range p.Errors {
			if e.Kind == packages.ListError { // the go command's report of the same errors
				continue
			}
			pos, _, ok := splitPos(e.Pos + ": x")
			if e.Kind != packages.TypeError || !ok || !unusedImport.MatchString(e.Msg) {
				lines = nil
				break
			}
			lines = append(lines, pos.Line)
			fmt.Fprintf(g.opts.Stderr, "zealgo build: %s: %s: imported as _ in the compiled program\n", e.Pos, e.Msg)
		}
		if len(lines) == 0 {
			continue
		}
		if err := g.blankImports(f, lines); err != nil {
			return nil, err
		}
		again = append(again, f)
	}
	if len(again) == 0 {
		return pkgs, nil
	}
	reloaded, err := g.load(again)
	if err != nil {
		return nil, err
	}
	byPkg := map[string]*packages.Package{}
	for _, p := range reloaded {
		byPkg[p.PkgPath] = p
	}
	for i, p := range pkgs {
		if r := byPkg[p.PkgPath]; r != nil {
			pkgs[i] = r
		}
	}
	return pkgs, nil
}

// blankImports rewrites the imports of f's copy declared on the given
// lines (of the original file) as _ imports.
func (g *generator) blankImports(f *file, lines []int) error {
	path := filepath.Join(g.opts.Dir, filepath.FromSlash(f.pkgDir), "handler.go")
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("zealgo: build: %w", err)
	}
	fset := token.NewFileSet()
	syn, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
	if err != nil {
		return fmt.Errorf("zealgo: build: %w", err)
	}
	for i := len(syn.Imports) - 1; i >= 0; i-- { // from the end: offsets stay valid
		spec := syn.Imports[i]
		if !slices.Contains(lines, fset.Position(spec.Path.Pos()).Line) {
			continue
		}
		if spec.Name != nil {
			start, end := fset.PositionFor(spec.Name.Pos(), false).Offset, fset.PositionFor(spec.Name.End(), false).Offset
			src = slices.Concat(src[:start], []byte("_"), src[end:])
		} else {
			at := fset.PositionFor(spec.Path.Pos(), false).Offset
			src = slices.Concat(src[:at], []byte("_ "), src[at:])
		}
	}
	return g.write(f.pkgDir+"/handler.go", src)
}

// undefinedSel matches go/types' message for an undefined selector.
var undefinedSel = regexp.MustCompile(`^(.+)\.(\w+) undefined \(type (\S+) has no field or method`)

// check records the first error of p on f.
func (g *generator) check(f *file, p *packages.Package) {
	if len(p.Errors) == 0 {
		return
	}
	e := p.Errors[0]
	for _, pe := range p.Errors { // go/parser's or go/types' error rather than the go command's
		if pe.Kind != packages.ListError {
			e = pe
			break
		}
	}
	f.err, f.errLine, f.errCol = e.Msg, 0, 0
	if e.Kind == packages.ListError { // "# pkg\nfile:line:col: msg"
		for _, line := range strings.Split(e.Msg, "\n") {
			if pos, msg, ok := splitPos(line); ok {
				f.err, e.Pos = msg, fmt.Sprintf("%s:%d:%d", pos.Filename, pos.Line, pos.Column)
				break
			}
		}
	}
	if pos, _, ok := splitPos(e.Pos + ": x"); ok {
		f.errLine, f.errCol = pos.Line, pos.Column
	}
	if m := undefinedSel.FindStringSubmatch(e.Msg); m != nil {
		f.receiver, f.selector, f.receiverType = m[1], m[2], m[3]
		if f.errCol > len(f.receiver)+1 { // at the receiver, as the interpreter says, not at the name
			f.errCol -= len(f.receiver) + 1
		}
		if f.receiverType == "*host.API" { // as the interpreter names it
			f.receiverType = "*" + hostPath + ".API"
		}
	}
}

// varNames are the variables a handler or page file is read for.
var varNames = []string{"get", "post", "put", "delete", "patch", "middleware"}

// inputFields are the identifiers that make the host parse a file's input
// before the call (host.inputFields).
var inputFields = map[string]bool{"Input": true, "Post": true, "Form": true, "PostForm": true, "MultipartForm": true}

// writeRegistration writes the file that registers f's variables.
func (g *generator) writeRegistration(f *file, p *packages.Package) error {
	fset := p.Fset
	base := strings.TrimSuffix(f.rel[strings.LastIndexByte(f.rel, '/')+1:], ".go")
	plain := f.task || f.rel == setupFile // variables registered as they are
	if !plain {
		base = routepat.VarName(base) // [slug].go serves every method with var slug
	}
	names := []string{base}
	if !plain {
		names = append(names, varNames...)
	}
	w := newWriter(p.Types)
	var vars, pos, funcs []string
	seen := map[string]bool{}
	for _, n := range names {
		v, ok := p.Types.Scope().Lookup(n).(*types.Var)
		if !ok || seen[n] { // a file named get.go lists get twice
			continue
		}
		seen[n] = true
		at := fset.Position(v.Pos())
		pos = append(pos, fmt.Sprintf("%q: {%d, %d}", n, at.Line, at.Column))
		sig, isFunc := v.Type().Underlying().(*types.Signature)
		if isFunc {
			funcs = append(funcs, fmt.Sprintf("%q: %s", n, n))
		}
		if plain || n == "middleware" || !isFunc || !validHandler(sig) {
			vars = append(vars, fmt.Sprintf("%q: %s", n, n))
			continue
		}
		vars = append(vars, fmt.Sprintf("%q: %s", n, w.adapter(f.rel, at, n, sig)))
	}
	var imports []string
	namesInput, goStmt := false, false
	for _, syn := range p.Syntax {
		for _, imp := range syn.Imports {
			imports = append(imports, imp.Path.Value)
		}
		ast.Inspect(syn, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && inputFields[id.Name] {
				namesInput = true
			}
			return !namesInput
		})
		ast.Inspect(syn, func(n ast.Node) bool {
			if _, ok := n.(*ast.GoStmt); ok {
				goStmt = true
			}
			return !goStmt
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by zealgo build from %s. DO NOT EDIT.\n\npackage %s\n\nimport (\n", f.rel, p.Name)
	for _, line := range w.imports() {
		fmt.Fprintf(&b, "\t%s\n", line)
	}
	fmt.Fprintf(&b, ")\n\nfunc init() {\n\tzg_host.RegisterCompiled(zg_host.CompiledFile{\n")
	fmt.Fprintf(&b, "\t\tPath: %q,\n\t\tHash: %q,\n\t\tMatchSource: %v,\n", f.rel, f.hash, len(g.opts.Trees) > 0)
	fmt.Fprintf(&b, "\t\tImports: []string{%s},\n\t\tNamesInput: %v,\n\t\tGoStmt: %v,\n", strings.Join(imports, ", "), namesInput, goStmt)
	fmt.Fprintf(&b, "\t\tPackage: %q,\n\t\tFuncs: map[string]any{%s},\n", g.importPath(f), strings.Join(funcs, ", "))
	fmt.Fprintf(&b, "\t\tPos: map[string][2]int{%s},\n", strings.Join(pos, ", "))
	fmt.Fprintf(&b, "\t\tVars: map[string]any{\n")
	for _, v := range vars {
		fmt.Fprintf(&b, "\t\t\t%s,\n", v)
	}
	fmt.Fprintf(&b, "\t\t},\n\t})\n}\n")
	f.registered = true
	return g.write(f.pkgDir+"/zz_register.go", []byte(b.String()))
}

// importPath is the import path of f's package.
func (g *generator) importPath(f *file) string { return g.importBase + "/" + f.pkgDir }

// goDir is where the go command runs: the generated module, or the
// application's with Overlay.
func (g *generator) goDir() string {
	if g.virtBase != "" {
		return g.opts.Module
	}
	return g.opts.Dir
}

// remove removes the package directory dir and its overlay entries.
func (g *generator) remove(dir string) error {
	if err := os.RemoveAll(filepath.Join(g.opts.Dir, filepath.FromSlash(dir))); err != nil {
		return fmt.Errorf("zealgo: build: %w", err)
	}
	if g.virtBase != "" {
		prefix := filepath.Join(g.virtBase, filepath.FromSlash(dir)) + string(filepath.Separator)
		for virt := range g.overlay {
			if strings.HasPrefix(virt, prefix) {
				delete(g.overlay, virt)
			}
		}
	}
	return nil
}

// validHandler reports whether the host accepts sig as a handler: not
// variadic, results (), (T) or (T, error). Other funcs are registered as
// they are, and the host reports them as it does interpreted ones.
func validHandler(sig *types.Signature) bool {
	if sig.Variadic() || sig.Results().Len() > 2 {
		return false
	}
	if sig.Results().Len() == 2 {
		return types.Identical(sig.Results().At(1).Type(), types.Universe.Lookup("error").Type())
	}
	return true
}
