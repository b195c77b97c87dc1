package interp

import (
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing/fstest"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// Module is the application's own Go module. A file compiled with
// Options.Module may import any package of it ("example.com/blog/lib/posts"
// for the directory lib/posts), and those packages may import each other.
// They are interpreted from source, never compiled into the binary: each
// compile reads them afresh, and each compiled file gets its own copy of
// their package-level variables. A package that Options.Symbols provides is
// the compiled one, even when its source lies inside the module.
//
// A package's files are its ordinary .go files: _test.go files and files
// excluded by build constraints (//go:build ignore, as handler files carry)
// are left out, as the go command does.
type Module struct {
	// Path is the module path declared in go.mod ("example.com/blog").
	Path string
	// Dir is the directory holding go.mod.
	Dir string
}

// FindModule returns the module whose go.mod lies in dir, or nil when dir
// holds no go.mod.
func FindModule(dir string) (*Module, error) {
	gomod := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(gomod)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("interp: %w", err)
	}
	p := modfile.ModulePath(data)
	if p == "" {
		return nil, fmt.Errorf("interp: %s declares no module path", gomod)
	}
	return &Module{Path: p, Dir: dir}, nil
}

// dirOf returns the directory, slash-separated and relative to the module
// root ("." for the root), of the package with import path ip, and whether
// ip belongs to the module.
func (m *Module) dirOf(ip string) (string, bool) {
	if ip == m.Path {
		return ".", true
	}
	rel, ok := strings.CutPrefix(ip, m.Path+"/")
	return rel, ok && rel != ""
}

// Dependencies returns the directories of the application packages that
// the file at path imports, directly or not, as a compile with opts would
// load them (none without opts.Module; packages in opts.Symbols are
// compiled in and left out). A directory that does not exist yet is listed
// too. It reads import clauses only and never fails: problems are the
// compile's to report. It is meant for CacheOptions.Deps.
func Dependencies(path string, opts Options) []string {
	if opts.Module == nil {
		return nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
	if err != nil && f == nil {
		return nil
	}
	l := newLoader(opts, true)
	_ = l.walk(path, f, fset)
	return l.dirs
}

// pkgFile is one file of an application package, as a compile uses it.
type pkgFile struct {
	rel  string // slash path from the module root: "lib/posts/posts.go"
	src  []byte // the text Yaegi compiles (rewritten by fix: go statements guarded, check's fixes)
	file *ast.File
}

// loader gathers the application packages that one file imports, directly
// or not, checking them as it goes: syntax, import cycles, missing
// packages, the constructs the interpreter rejects.
type loader struct {
	m           *Module
	compiled    map[string]bool // import paths that symbol tables provide
	fset        *token.FileSet  // of the package files; the Program need not keep their line tables
	importsOnly bool            // Dependencies: read import clauses, report nothing
	checking    bool            // CheckFile: leave the interpreter's traps to package check, which reports them all

	state   map[string]int // import path: loading or loaded
	stack   []string       // import paths being loaded, outermost first
	files   []*pkgFile
	dirs    []string // absolute package directories, in the order first seen
	paths   []string // every import path of every file walked
	guarded bool     // some package file has go statements rewritten
}

const (
	loading = 1
	loaded  = 2
)

func newLoader(opts Options, importsOnly bool) *loader {
	compiled := map[string]bool{}
	for _, s := range opts.Symbols {
		for k := range s {
			compiled[path.Dir(k)] = true
		}
	}
	return &loader{m: opts.Module, compiled: compiled, fset: token.NewFileSet(), importsOnly: importsOnly, state: map[string]int{}}
}

// walk loads every application package that f, the file at name
// positioned in fset, imports.
func (l *loader) walk(name string, f *ast.File, fset *token.FileSet) *Error {
	for _, im := range f.Imports {
		ip, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		l.paths = append(l.paths, ip)
		dir, ok := l.m.dirOf(ip)
		if !ok || l.compiled[ip] {
			continue
		}
		where := fset.Position(im.Path.Pos())
		where.Filename = name
		if e := l.load(ip, dir, where); e != nil && !l.importsOnly {
			return e
		}
	}
	return nil
}

// load reads the package ip in the module directory dir, imported at
// where, and walks its imports.
func (l *loader) load(ip, dir string, where token.Position) *Error {
	atImport := func(msg string) *Error {
		return &Error{File: where.Filename, Line: where.Line, Col: where.Column, Msg: msg}
	}
	if err := module.CheckImportPath(ip); err != nil {
		return atImport(err.Error()) // no "..", no backslash: the path stays inside the module
	}
	switch l.state[ip] {
	case loaded:
		return nil
	case loading:
		chain := append(append([]string(nil), l.stack[indexOf(l.stack, ip):]...), ip)
		return atImport("import cycle not allowed: " + strings.Join(chain, " imports "))
	}
	abs := filepath.Join(l.m.Dir, filepath.FromSlash(dir))
	l.dirs = append(l.dirs, abs)
	l.state[ip] = loading
	l.stack = append(l.stack, ip)
	defer func() {
		l.stack = l.stack[:len(l.stack)-1]
		l.state[ip] = loaded
	}()
	files, e := l.read(ip, dir, abs, atImport)
	if e != nil {
		return e
	}
	for _, pf := range files {
		if e := l.walk(pf.rel, pf.file, l.fset); e != nil {
			return e
		}
	}
	l.files = append(l.files, files...)
	return nil
}

// read parses the files of the package ip in dir (abs on disk) and checks
// them; atImport places a problem of the package as a whole at the import
// that asked for it.
func (l *loader) read(ip, dir, abs string, atImport func(string) *Error) ([]*pkgFile, *Error) {
	ents, err := os.ReadDir(abs)
	if IsNotFound(err) {
		return nil, atImport(fmt.Sprintf("package %s is not in the application: there is no directory %s", ip, dir))
	}
	if err != nil {
		return nil, atImport(fmt.Sprintf("package %s: %v", ip, err))
	}
	var files []*pkgFile
	for _, ent := range ents {
		n := ent.Name()
		if ent.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		// The go command's rules: name suffixes (_linux), build constraints.
		if ok, err := build.Default.MatchFile(abs, n); err == nil && !ok {
			continue
		}
		pf, e := l.parse(path.Join(dir, n), filepath.Join(abs, n))
		if e != nil {
			return nil, e
		}
		if pf == nil {
			continue
		}
		if pf.file.Name.Name == "main" {
			return nil, atImport(fmt.Sprintf("import %q is a program (package main in %s), not an importable package", ip, pf.rel))
		}
		if len(files) > 0 && pf.file.Name.Name != files[0].file.Name.Name {
			return nil, at(l.fset, pf.rel, pf.file.Name.Pos(), fmt.Sprintf("found packages %s (%s) and %s (%s) in %s",
				files[0].file.Name.Name, path.Base(files[0].rel), pf.file.Name.Name, n, dir))
		}
		files = append(files, pf)
	}
	if len(files) == 0 {
		return nil, atImport(fmt.Sprintf("no Go files to import in %s (_test.go files and files excluded by build constraints, "+
			"such as handler files with //go:build ignore, are left out)", dir))
	}
	return files, nil
}

// parse reads and parses the package file at abs, named rel in positions,
// and checks what the interpreter would reject. A nil file without error
// is one to leave out (unreadable while only imports are read).
func (l *loader) parse(rel, abs string) (*pkgFile, *Error) {
	src, err := os.ReadFile(abs)
	if err != nil {
		if l.importsOnly {
			return nil, nil
		}
		return nil, &Error{File: rel, Msg: err.Error()}
	}
	mode := parser.ParseComments | parser.SkipObjectResolution
	if l.importsOnly {
		mode = parser.ImportsOnly
	}
	f, err := parser.ParseFile(l.fset, rel, src, mode)
	if err != nil {
		if l.importsOnly && f != nil {
			return &pkgFile{rel: rel, file: f}, nil
		}
		if l.importsOnly {
			return nil, nil
		}
		return nil, fromParseError(rel, err).(*Error)
	}
	if l.importsOnly {
		return &pkgFile{rel: rel, file: f}, nil
	}
	if !l.checking {
		if e := checkSource(l.fset, rel, f); e != nil {
			return nil, e
		}
	}
	return &pkgFile{rel: rel, src: src, file: f}, nil
}

// fsys returns the source file system Yaegi reads the packages from:
// src/<module path>/<dir>/<file>, under GoPath ".".
func (l *loader) fsys() fs.FS {
	m := fstest.MapFS{}
	for _, pf := range l.files {
		m[path.Join("src", l.m.Path, pf.rel)] = &fstest.MapFile{Data: pf.src, Mode: 0o444}
	}
	return m
}

// locate finds, in an error message of Yaegi's, the innermost position in
// a package file ("... import "x" error: src/<module>/lib/x/x.go:4:9:
// undefined: y") and returns it as an Error in that file.
func (l *loader) locate(msg string) *Error {
	re := regexp.MustCompile(`src/` + regexp.QuoteMeta(l.m.Path) + `/(\S+?\.go):(\d+):(\d+): `)
	all := re.FindAllStringSubmatchIndex(msg, -1)
	if len(all) == 0 {
		return nil
	}
	m := all[len(all)-1]
	line, _ := strconv.Atoi(msg[m[4]:m[5]])
	col, _ := strconv.Atoi(msg[m[6]:m[7]])
	e := &Error{File: msg[m[2]:m[3]], Line: line, Col: col, Msg: firstLine(msg[m[1]:])}
	for _, pf := range l.files {
		if pf.rel == e.File {
			e.describeSelector(l.fset, pf.file)
		}
	}
	return e
}

// indexOf returns the index of s in list, or 0.
func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return 0
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Package gives package check the parsed files of the application package
// at import path p, as this loader read them (check.Sources).
func (l *loader) Package(p string) (*token.FileSet, []*ast.File, bool) {
	if l == nil || l.m == nil {
		return nil, nil, false
	}
	var files []*ast.File
	for _, pf := range l.files {
		if l.importPath(pf.rel) == p {
			files = append(files, pf.file)
		}
	}
	return l.fset, files, len(files) > 0
}

// importPath returns the import path of the package that holds the file
// at rel, a slash path from the module root.
func (l *loader) importPath(rel string) string {
	if dir := path.Dir(rel); dir != "." {
		return l.m.Path + "/" + dir
	}
	return l.m.Path
}
