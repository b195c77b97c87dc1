package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/token"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/zealgo/zealgo/interp"
)

// The compiled registry: `zealgo build` compiles every file under api/,
// public/ (pages) and task/ with the Go compiler, each into a package of
// its own, whose init registers the file with RegisterCompiled. The
// generated main also calls RegisterCompiled, with no files, so that a
// built binary serves from the registry even when the application has no
// handler file. A process whose registry was registered starts no
// interpreter and no file watcher for those files: they are looked up
// here by their path relative to the root. Templates and static files
// are still read from the root.

// CompiledFile is one handler, page or task file compiled into the binary
// by `zealgo build`. It is generated code; applications do not write it.
type CompiledFile struct {
	// Path is the file's path relative to the root, slash-separated:
	// "api/device/list.go".
	Path string
	// Hash is the hex SHA-256 of the file's source. When the registry
	// holds several files with one Path (a test binary made from several
	// trees), the one whose Hash is that of the file found at the root
	// serves.
	Hash string
	// MatchSource makes the file serve only where the file at the root
	// has its Hash (a test binary made from several trees).
	MatchSource bool
	// Vars holds the file's variables by name: a CompiledFunc for each
	// handler or page func, the variable's value otherwise (a task's
	// func, the middleware list, a value that is no valid handler).
	Vars map[string]any
	// Package is the import path of the package the file is compiled
	// into, and Funcs its variables that hold funcs, as they are: a panic's
	// frames in them are named as the interpreter names them (the file's
	// path, the variable's name).
	Package string
	Funcs   map[string]any
	// Pos holds where each variable is declared: line and column.
	Pos map[string][2]int
	// Imports lists the file's import paths.
	Imports []string
	// NamesInput reports that the file names a field that holds the
	// request's input (API.Input, Request.Post, ...), so that the input is
	// parsed before each call, as for an interpreted file.
	NamesInput bool
	// GoStmt reports that the file holds a go statement, whose goroutine
	// may use the call's objects after the call: its requests' states are
	// not reused (state.go), as for an interpreted file.
	GoStmt bool
	// Err, when not empty, is why the file could not be compiled (only
	// in a build that keeps going past such files, as the test suites'
	// builds do), at line ErrLine, column ErrCol; requests for the file
	// then answer 500 handler_compile_error, as interpreted.
	Err             string
	ErrLine, ErrCol int
	ErrSelector     string // Err is about an undefined selector: its name
	ErrReceiver     string // and the expression before the dot
	ErrReceiverType string // and its type, with the full import path
}

// CompiledFunc is a handler or page func as `zealgo build` compiles it:
// given the application once, when the file is loaded, it returns the call
// of the func with its parameters injected by type and its results
// converted per the return contract, with no reflection per request.
type CompiledFunc func(app *App) func(api *API) (any, error)

// ProvidedOf returns the value given to App.Provide whose type is T, or
// T's zero value when there is none. Compiled handlers (CompiledFunc) take
// their provided parameters with it when the file is loaded.
func ProvidedOf[T any](app *App) T {
	v, _ := provided(app, reflect.TypeFor[T]())
	t, _ := v.(T)
	return t
}

// provided returns the value given to App.Provide whose type is t, and
// whether there is one. Every handler file's package compiles the bodies
// of ProvidedOf and CompiledParam, and would read the running server's
// types through this one's if it were inlined there (see rtOf).
//
//go:noinline
func provided(app *App, t reflect.Type) (any, bool) {
	v, ok := regOf(app).provided[t]
	if !ok {
		return nil, false
	}
	return v.Interface(), true
}

// CompiledParam is ProvidedOf for parameter n (from 1) of the func in
// variable name, declared at rel:line:col: as for an interpreted file, a
// parameter whose type was not provided is logged when the file loads,
// and receives its zero value. Generated code calls it.
func CompiledParam[T any](app *App, rel string, line, col int, name string, n int) T {
	t, _ := compiledParam(app, reflect.TypeFor[T](), rel, line, col, name, n).(T)
	return t
}

// compiledParam is CompiledParam for type t: the provided value, or nil.
func compiledParam(app *App, t reflect.Type, rel string, line, col int, name string, n int) any {
	v, ok := provided(app, t)
	if !ok {
		app.Logger().Warn(fmt.Sprintf("%s:%d:%d: %s: parameter %d (%s) is not injectable and receives its zero value",
			rel, line, col, name, n, t), "file", rel)
	}
	return v
}

// registry holds the compiled files by path.
var registry struct {
	sync.Mutex
	used  bool
	files map[string][]*CompiledFile
}

// RegisterCompiled adds files to the compiled registry and makes every
// application of this process serve its handler, page and task files from
// the registry instead of interpreting them. `zealgo build` generates its
// calls; applications do not call it.
func RegisterCompiled(files ...CompiledFile) {
	registry.Lock()
	defer registry.Unlock()
	registry.used = true
	if registry.files == nil {
		registry.files = map[string][]*CompiledFile{}
	}
	for i := range files {
		f := files[i]
		registry.files[f.Path] = append(registry.files[f.Path], &f)
		registerFrames(&f)
	}
}

// Compiled reports whether this binary was made by `zealgo build`: it
// serves its handler, page and task files compiled, from the registry.
func Compiled() bool { return isCompiled() }

// isCompiled reports whether this process serves from the registry
// alone: not so a native build of tiered serve (tier_child.go).
func isCompiled() bool {
	registry.Lock()
	used := registry.used
	registry.Unlock()
	return used && !tierHybrid()
}

// compiledCount returns the number of registered files.
func compiledCount() int {
	registry.Lock()
	defer registry.Unlock()
	n := 0
	for _, fs := range registry.files {
		n += len(fs)
	}
	return n
}

// compiledFor returns the registered files with path rel.
func compiledFor(rel string) []*CompiledFile {
	registry.Lock()
	defer registry.Unlock()
	return registry.files[rel]
}

// compiledSource is the fileSource of a compiled binary: each file is
// analyzed on its first use, as an interpreted one is compiled then, and
// kept.
type compiledSource[T any] struct {
	l     *loader
	build func(fileVars) (T, error)
	mu    sync.Mutex
	built map[*CompiledFile]*compiledResult[T]
	// byPath holds, by path, the result of each file that is the only one
	// registered at its path: it cannot change, so that a request finds
	// it with no lock.
	byPath sync.Map // string -> *compiledResult[T]
}

type compiledResult[T any] struct {
	once sync.Once
	v    T
	err  error
}

func newCompiledSource[T any](l *loader, build func(fileVars) (T, error)) *compiledSource[T] {
	return &compiledSource[T]{l: l, build: build, built: map[*CompiledFile]*compiledResult[T]{}}
}

// Get returns the file at path, an absolute path below the root.
func (s *compiledSource[T]) Get(path string) (T, error) {
	if r, ok := s.byPath.Load(path); ok {
		r := r.(*compiledResult[T])
		return r.v, r.err
	}
	var zero T
	cf, fixed, err := s.l.pickCompiled(path)
	if err != nil {
		return zero, err
	}
	s.mu.Lock()
	r := s.built[cf]
	if r == nil {
		r = &compiledResult[T]{}
		s.built[cf] = r
	}
	s.mu.Unlock()
	r.once.Do(func() {
		if cf.Err != "" {
			r.err = &interp.Error{File: cf.Path, Line: cf.ErrLine, Col: cf.ErrCol, Msg: cf.Err,
				Selector: cf.ErrSelector, Receiver: cf.ErrReceiver, ReceiverType: cf.ErrReceiverType}
			return
		}
		r.v, r.err = s.build(compiledVars{a: s.l.app, f: cf})
	})
	if fixed { // once done: whoever loads r finds it built
		s.byPath.Store(path, r)
	}
	return r.v, r.err
}

// Len returns the number of files loaded.
func (s *compiledSource[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.built)
}

// Close does nothing: a compiled source watches no file.
func (s *compiledSource[T]) Close() error { return nil }

// pickCompiled returns the registered file for path: the only one, or the
// one whose source is the file at path. fixed reports that it is the only
// one, whatever the file at path holds, so that the pick may be kept.
func (l *loader) pickCompiled(path string) (cf *CompiledFile, fixed bool, err error) {
	rel := l.dirs.rel(path)
	files := compiledFor(rel)
	if len(files) == 0 || strings.HasPrefix(rel, "../") {
		return nil, false, fmt.Errorf("zealgo: %s is not compiled into this binary: %w", rel, fs.ErrNotExist)
	}
	if len(files) == 1 && !files[0].MatchSource {
		return files[0], true, nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, false, fmt.Errorf("zealgo: %s: %w", rel, fs.ErrNotExist)
	}
	sum := sha256.Sum256(src)
	h := hex.EncodeToString(sum[:])
	for _, f := range files {
		if f.Hash == h {
			return f, false, nil
		}
	}
	return nil, false, fmt.Errorf("zealgo: %s differs from every version compiled into this binary: %w", rel, fs.ErrNotExist)
}

// compiledVars is a compiled file as fileVars.
type compiledVars struct {
	a *App
	f *CompiledFile
}

func (c compiledVars) Var(name string) (reflect.Value, bool) {
	v, ok := c.f.Vars[name]
	if !ok {
		return reflect.Value{}, false
	}
	if fn, ok := v.(CompiledFunc); ok {
		return reflect.ValueOf(fn(c.a)), true
	}
	return reflect.ValueOf(v), true
}

func (c compiledVars) Position(name string) token.Position {
	p := c.f.Pos[name]
	return token.Position{Filename: c.f.Path, Line: p[0], Column: p[1]}
}

func (c compiledVars) rel() string { return c.f.Path }

// mayDetach is App.mayDetach for a compiled file.
func (c compiledVars) mayDetach(l *loader) bool { return c.f.GoStmt || l.importsSource(c.f.Imports) }

// needsInput is App.needsInput for a compiled file.
func (c compiledVars) needsInput(l *loader) bool {
	return c.f.NamesInput || l.importsSource(c.f.Imports)
}

// registryListing lists a route tree from the compiled registry
// (compiledListing, routetree.go).
type registryListing struct{}

// paths returns the paths of the registered files that start with
// prefix.
func (registryListing) paths(prefix string) []string {
	registry.Lock()
	defer registry.Unlock()
	var out []string
	for p := range registry.files {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// here reports whether the registered file rel serves from this
// root: always, unless each of its versions serves only where its source
// is (a test binary of several trees), and then when abs exists.
func (registryListing) here(rel, abs string) bool {
	for _, f := range compiledFor(rel) {
		if !f.MatchSource {
			return true
		}
	}
	_, err := os.Stat(abs)
	return err == nil
}
