package host

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/zealgo/zealgo/interp"
	"github.com/zealgo/zealgo/interp/check"
)

// A child of tiered serve (tier.go). With a native build (TierEnv names
// its manifest), each handler, page and task file is read through the
// interpreter's cache as in an interpreted child, but the cache's build
// picks the compiled file when the source on disk is the one compiled and
// the application packages it imports are unchanged since the build; else
// it interprets the file, as before any build. The cache's watcher then
// turns a save into the interpreted version at once, and a file saved back
// to what was built into the compiled one. A file only compiled Go runs
// (check.CompiledOnly) asks the supervisor for a build at once, and keeps
// its last good version serving meanwhile (KeepLastGood); a new one
// answers 503 with Retry-After.

// codeCompiledOnly is the error code of a file only compiled Go runs,
// before a native build includes it.
const codeCompiledOnly = "compiled_only"

// tierRetryAfter is the Retry-After, in seconds, of codeCompiledOnly.
const tierRetryAfter = "5"

// tierState is what a child of tiered serve reads of its environment.
var tierState struct {
	once     sync.Once
	on       bool          // a child of tiered serve
	manifest *tierManifest // the native build's, nil in an interpreting child
}

// tierChild returns whether this process is a child of tiered serve, and
// its build's manifest when it runs a native build.
func tierChild() (bool, *tierManifest) {
	s := &tierState
	s.once.Do(func() {
		v := os.Getenv(TierEnv)
		s.on = v != ""
		if v == "" || v == "1" {
			return
		}
		data, err := os.ReadFile(v)
		m := &tierManifest{}
		if err == nil && json.Unmarshal(data, m) == nil {
			s.manifest = m
		}
	})
	return s.on, s.manifest
}

// tierHybrid reports whether this process serves a native build of tiered
// serve beside the interpreter: its registry is not used alone.
func tierHybrid() bool {
	_, m := tierChild()
	return m != nil
}

// tierWarm readies the interpreter of a child that runs a native build,
// before the child reports ready: every file there runs compiled, so the
// interpreter has built nothing yet, and the first save after the switch
// would pay for building the linked packages its file imports (the host
// package's types: tens of milliseconds, most of a cold reload, and on a
// loaded machine over the 50 ms a reload may take). It builds those of
// every Go file the build holds now (interp.Preload), while the process
// it replaces still serves, saves included.
func (l *loader) tierWarm(m *tierManifest) {
	if l.dirs.module == nil {
		return
	}
	start := time.Now()
	paths := make([]string, 0, len(m.Files))
	for rel := range m.Files {
		paths = append(paths, filepath.Join(l.dirs.module.Dir, filepath.FromSlash(rel)))
	}
	n := interp.Preload(paths, interp.Options{Symbols: l.app.symbols})
	before, after := l.tierHeap, liveHeap()
	floor := tierGCFloor(l.app.cfg.GCFloor, before, after)
	l.app.cfg.GCFloor = floor
	l.log.Info("zealgo tier: interpreter ready for the next save", "packages", n, "files", len(paths),
		"took", time.Since(start).Round(time.Millisecond), "heap_before", before, "heap_after", after, "gc_floor", floor)
}

// tierFloorMax bounds tierGCFloor: at most this many times Config.GCFloor.
const tierFloorMax = 4

// tierGCFloor returns the GC floor of a child of tiered serve that holds
// its warmed interpreter (tierWarm): floor scaled by after/before, the
// live heap with the interpreter's packages (and setup.go's program) over
// the live heap before the interpreter built anything (tierBaseHeap), at
// most tierFloorMax times floor. Those packages (go/types objects,
// several megabytes, dense in pointers) stay live and are marked at every
// collection; with the floor of the built binary the process
// would collect as often as it, marking two to three times the heap each
// time: a few percent more CPU per request. With the floor scaled, each
// collection marks more but comes that much later, so that the collector
// costs what it costs the built binary per request; the price is a larger
// heap goal (tens of megabytes) in a development server. A floor of 0
// (Go's own policy) stays 0, and GOGC rules a live heap over the floor as
// in the built binary.
func tierGCFloor(floor int64, before, after uint64) int64 {
	if floor <= 0 || before == 0 || after <= before {
		return floor
	}
	scaled := float64(floor) * float64(after) / float64(before)
	return int64(min(scaled, float64(tierFloorMax*floor)))
}

// tierBaseHeap returns the live heap of a native build's child of tiered
// serve before its interpreter builds anything (setup.go, which such a
// child interprets, and tierWarm), which tierWarm compares with the heap
// after: the built binary's heap, less what it has not allocated yet. It
// returns 0 in any other process, without collecting.
func tierBaseHeap() uint64 {
	if !tierHybrid() {
		return 0
	}
	return liveHeap()
}

// liveHeap collects and returns the bytes of heap left live.
func liveHeap() uint64 {
	runtime.GC()
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// tierBuild wraps the interpreted build of a child of tiered serve: the
// compiled file when it is current (see above), else the interpreted one;
// a file only compiled Go runs asks for a build.
func tierBuild[T any](l *loader, interpreted func(string) (T, error), compiled func(fileVars) (T, error)) func(string) (T, error) {
	return func(path string) (T, error) {
		if cf := l.tierCompiled(path); cf != nil {
			return compiled(compiledVars{a: l.app, f: cf})
		}
		v, err := interpreted(path)
		if c := childOf(&l.app.sup); c != nil && compiledOnly(err) {
			l.log.Info("zealgo tier: the file runs compiled only until a native build includes it", "file", l.dirs.rel(path), "err", err)
			c.Note("build " + l.dirs.rel(path))
		}
		return v, err
	}
}

// compiledOnly reports whether err is a construct only compiled Go runs.
func compiledOnly(err error) bool {
	var ce *interp.Error
	return errors.As(err, &ce) && ce.Rule != "" && check.CompiledOnly(check.Diagnostic{Rule: ce.Rule, Msg: ce.Msg})
}

// compiledOnlyError is what a request for a file only compiled Go runs
// answers in tiered serve before the build is in: 503 with Retry-After.
func compiledOnlyError(err error) *Error {
	if on, _ := tierChild(); !on || !compiledOnly(err) {
		return nil
	}
	e := errorf(http.StatusServiceUnavailable, codeCompiledOnly, "this handler runs compiled only: a native build is on its way")
	e.Header = http.Header{"Retry-After": {tierRetryAfter}}
	return e
}

// tierCompiled returns the compiled file of path when this process runs a
// native build whose file is the one on disk and whose application
// packages the file imports are unchanged; else nil.
func (l *loader) tierCompiled(path string) *CompiledFile {
	_, m := tierChild()
	if m == nil {
		return nil
	}
	h, err := hashFile(path)
	if err != nil {
		return nil
	}
	var cf *CompiledFile
	for _, f := range compiledFor(l.dirs.rel(path)) {
		if f.Hash == h && f.Err == "" {
			cf = f
		}
	}
	if cf == nil || l.dirs.module == nil {
		return nil
	}
	for _, dir := range interp.Dependencies(path, interp.Options{Symbols: l.app.symbols, Module: l.dirs.module}) {
		if !sameGoFiles(l.dirs.module.Dir, dir, m.Files) {
			return nil
		}
	}
	return cf
}

// sameGoFiles reports whether the Go files of dir (not _test.go) are those
// the manifest holds for it.
func sameGoFiles(module, dir string, files map[string]string) bool {
	rel, err := filepath.Rel(module, dir)
	if err != nil {
		return false
	}
	prefix := filepath.ToSlash(rel) + "/"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		h, err := hashFile(filepath.Join(dir, name))
		if err != nil || files[prefix+name] != h {
			return false
		}
		n++
	}
	for p := range files {
		if rest, ok := strings.CutPrefix(p, prefix); ok && !strings.Contains(rest, "/") {
			n--
		}
	}
	return n == 0
}
