package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/zealgo/zealgo/interp"
)

// The application's setup.go: a file at its root, interpreted at start
// (compiled by `zealgo build`), that configures the application as a
// compiled main does before it starts:
//
//	//go:build ignore
//
//	package main
//
//	import "github.com/zealgo/zealgo/host"
//
//	var setup = func(app *host.App) error {
//		app.UseAlias("request-id")
//		app.When("/api/admin", "basic-auth")
//		return nil
//	}
//
// Its func runs on an App of its own, which records what it registers on
// top of what the compiled main registered; the server then serves with the
// result (a generation, setupgen.go). When setup.go changes, it runs again
// into a fresh interpreter and a fresh generation, which replaces the
// running one as a whole once it is ready; an edit that fails (does not
// compile, returns an error, panics, makes a call fixed at start-up)
// leaves the running generation serving and is logged.

// setupFileName is the name of the setup file, at the application root.
const setupFileName = "setup.go"

// setupVar is the variable of setup.go that holds its func.
const setupVar = "setup"

// setupState runs setup.go and holds the generation the server serves
// with.
type setupState struct {
	cur   atomic.Pointer[generation]
	c     *core
	path  string
	cache *interp.Cache[*generation] // watches setup.go, when interpreted
}

// start makes the first generation, from what the compiled main
// registered and, when there is one, setup.go, which is then watched. A
// setup.go that fails stops the start-up.
func (s *setupState) start(c *core) error {
	s.c, s.path = c, filepath.Join(c.dirs.root, setupFileName)
	if isCompiled() {
		g, err := s.build(s.path)
		if err != nil {
			return err
		}
		s.cur.Store(g)
		return nil
	}
	opts := c.load.cacheOptions()
	opts.MaxEntries, opts.IdleTTL, opts.KeepLastGood, opts.OnReload = 0, 0, true, s.reloaded
	cache, err := interp.NewCache(s.build, opts)
	if err != nil {
		return err
	}
	s.cache = cache
	g, err := cache.Get(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		g, err = s.build(s.path) // none: what the compiled main registered
	}
	if err != nil {
		return err
	}
	s.cur.Store(g)
	return nil
}

// startWorker runs setup.go once in a task worker, for the values it
// provides to tasks; it is not watched there.
func (s *setupState) startWorker(app *App, l *loader) error {
	s.c = rtOf(app)
	s.c.load, s.c.dirs = l, app.dirs
	fn, err := s.load(filepath.Join(app.dirs.root, setupFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	reg, err := runSetup(app, fn)
	if err != nil {
		return err
	}
	s.cur.Store(&generation{reg: reg})
	return nil
}

// close stops watching setup.go.
func (s *setupState) close() error {
	if s.cache == nil {
		return nil
	}
	return s.cache.Close()
}

// reloaded swaps in the generation of a changed setup.go, or logs why
// the running one keeps serving.
func (s *setupState) reloaded(path string, err error) {
	log := s.c.log
	switch {
	case errors.Is(err, fs.ErrNotExist):
		g, gerr := s.build(path)
		if gerr != nil {
			log.Error("zealgo: setup.go removed; the previous setup keeps serving", "err", gerr)
			return
		}
		s.swap(g)
		log.Info("setup.go removed: serving what the compiled main registers", "file", setupFileName)
	case err != nil:
		log.Error("zealgo: setup.go: reload failed; the previous setup keeps serving", "file", setupFileName, "err", err)
	default:
		g, gerr := s.cache.Get(path)
		if gerr != nil {
			return
		}
		s.swap(g)
		log.Info("reloaded", "file", setupFileName)
	}
}

// swap makes g the generation new requests get, and drops the compiled
// handler and page files, which resolved the previous one's aliases and
// provided values: each is compiled again on its next request.
func (s *setupState) swap(g *generation) {
	s.cur.Store(g)
	for _, src := range []any{s.c.api, s.c.site.pages} {
		if ev, ok := src.(interface{ Evict(time.Time) int }); ok {
			ev.Evict(time.Now().Add(time.Hour))
		}
	}
}

// build runs the setup file at path into a generation; without the file,
// the generation of what the compiled main registered.
func (s *setupState) build(path string) (*generation, error) {
	fn, err := s.load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newGeneration(s.c, s.c.app.reg.clone())
	}
	if err != nil {
		return nil, err
	}
	reg, err := runSetup(s.c.app, fn)
	if err != nil {
		return nil, err
	}
	g, err := newGeneration(s.c, reg)
	if err != nil {
		return nil, fmt.Errorf("zealgo: %s: %w", setupFileName, err)
	}
	return g, nil
}

// load compiles setup.go (in a binary of `zealgo build`, finds it in the
// registry) and returns its func; fs.ErrNotExist when there is none.
func (s *setupState) load(path string) (func(*App) error, error) {
	var vars fileVars
	if isCompiled() {
		cf, _, err := s.c.load.pickCompiled(path)
		if err != nil {
			return nil, err
		}
		if cf.Err != "" {
			return nil, fmt.Errorf("zealgo: %s:%d:%d: %s", cf.Path, cf.ErrLine, cf.ErrCol, cf.Err)
		}
		vars = compiledVars{a: s.c.app, f: cf}
	} else {
		prog, _, err := s.c.load.compile(s.c.dirs.root, path)
		if err != nil {
			return nil, err
		}
		vars = interpVars{prog}
	}
	return setupFunc(vars)
}

// setupFunc returns the func in setup.go's variable setup.
func setupFunc(vars fileVars) (func(*App) error, error) {
	v, ok := vars.Var(setupVar)
	if !ok {
		return nil, fmt.Errorf("zealgo: %s: no variable %s; declare var setup = func(app *host.App) error { ... }",
			vars.rel(), setupVar)
	}
	fn, ok := v.Interface().(func(*App) error)
	if !ok || fn == nil {
		p := vars.Position(setupVar)
		return nil, fmt.Errorf("zealgo: %s:%d:%d: setup is a %s, not a func(app *host.App) error",
			vars.rel(), p.Line, p.Column, typeName(v))
	}
	return fn, nil
}

// typeName names v's type, "nil" for none.
func typeName(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	return v.Type().String()
}

// runSetup runs fn on an App of its own that records, on top of what app
// registered, what fn registers, and returns the registration. A call
// fixed at start-up, an error or a panic is the error, which names the
// call, or says where the panic happened.
func runSetup(app *App, fn func(*App) error) (reg *registration, err error) {
	rec := &App{cfg: app.cfg, log: app.log, symbols: app.symbols, worker: app.worker, dirs: app.dirs,
		server: app.server, rt: rtOf(app)}
	rec.reg = *app.reg.clone()
	rec.reg.bySetup = true
	defer func() {
		rec.started = true // registering later (from a closure of setup's) panics as on a started App
		p := recover()
		if p == nil {
			return
		}
		pi := recovered(p)
		if ref, ok := pi.value.(setupRefusal); ok {
			err = ref.error()
			return
		}
		err = fmt.Errorf("zealgo: %s: setup panicked: %s", setupFileName, pi.desc)
		if at := pi.where(); at != "" {
			err = fmt.Errorf("zealgo: %s: setup panicked at %s: %s", setupFileName, at, pi.desc)
		}
	}()
	if err := fn(rec); err != nil {
		return nil, fmt.Errorf("zealgo: %s: %w", setupFileName, err)
	}
	rec.reg.bySetup = false
	return &rec.reg, nil
}

// fileExists reports whether path names a file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
