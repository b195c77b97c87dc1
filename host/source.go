package host

import (
	"go/token"
	"os"
	"reflect"

	"github.com/zealgo/zealgo/interp"
)

// Sources of handler, page and task files. The host reads a file through
// one of two sources, chosen at start-up: the interpreted loader (an
// interp.Cache that compiles a file with Yaegi on its first use and again
// when it changes on disk) or, in a binary made by `zealgo build`, the
// compiled registry (compiled.go). Either gives the host a fileVars, from
// which analyze builds the same *handlerFile, so that routing, modes,
// middleware, HEAD/OPTIONS/405 and the return contract are one code path.

// fileSource gives the compiled form of the file at an absolute path:
// fs.ErrNotExist (wrapped) when there is none.
type fileSource[T any] interface {
	Get(path string) (T, error)
	// Len returns the number of files loaded.
	Len() int
	Close() error
}

// fileVars is what the host reads of one file: the values of its
// top-level variables and where they are declared.
type fileVars interface {
	// Var returns the value of the top-level variable name.
	Var(name string) (reflect.Value, bool)
	// Position returns where name is declared.
	Position(name string) token.Position
	// rel is the file's path relative to the root, e.g. api/device/list.go.
	rel() string
	// needsInput reports whether the input is parsed before each call
	// (loader.needsInput).
	needsInput(l *loader) bool
	// mayDetach reports whether the file may start goroutines that
	// outlive its call (loader.mayDetach).
	mayDetach(l *loader) bool
}

// interpVars is an interpreted file.
type interpVars struct{ *interp.Program }

func (p interpVars) rel() string               { return p.Path }
func (p interpVars) needsInput(l *loader) bool { return l.needsInput(p.File) }
func (p interpVars) mayDetach(l *loader) bool  { return l.mayDetach(p.File) }

// handlerSource returns the source of the handler or page files under dir.
func (l *loader) handlerSource(dir string) (fileSource[*handlerFile], error) {
	if isCompiled() {
		if dir == l.dirs.api {
			l.log.Info("zealgo: handler, page and task files compiled into the binary", "files", compiledCount())
		}
		return newCompiledSource(l, l.compiledHandler), nil
	}
	build := l.buildHandlers(dir)
	if on, m := tierChild(); on { // tiered serve (tier_child.go)
		if m != nil && dir == l.dirs.api {
			l.log.Info("zealgo tier: serving a native build: files unchanged since run compiled", "gen", m.Gen, "files", compiledCount())
			l.tierWarm(m)
		}
		build = tierBuild(l, build, l.compiledHandler)
	}
	c, err := interp.NewCache(build, l.servingCacheOptions())
	if err != nil {
		return nil, err
	}
	return c, nil
}

// compiledHandler makes a compiled handler or page file ready to serve.
func (l *loader) compiledHandler(fv fileVars) (*handlerFile, error) {
	f, err := l.analyzeFile(fv, fv.rel())
	if err != nil {
		return nil, err
	}
	f.serve = chain(l.invoke, f.mw)
	return f, nil
}

// taskSource returns the source of the task files of a worker.
func (l *loader) taskSource() (fileSource[*taskFunc], error) {
	compiled := func(fv fileVars) (*taskFunc, error) { return l.analyzeTaskFile(fv, fv.rel()) }
	if isCompiled() {
		return newCompiledSource(l, compiled), nil
	}
	build := l.buildTask
	if on, _ := tierChild(); on {
		build = tierBuild(l, build, compiled)
	}
	c, err := interp.NewCache(build, l.cacheOptions())
	if err != nil {
		return nil, err
	}
	return c, nil
}

// statTask checks that the task file at path exists: on disk, or in the
// compiled registry.
func (l *loader) statTask(path string) error {
	if isCompiled() {
		_, _, err := l.pickCompiled(path)
		return err
	}
	_, err := os.Stat(path)
	return err
}
