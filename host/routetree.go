package host

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
	"github.com/zealgo/zealgo/internal/routepat"
)

// The route tree: what the resolver of route parameters (routematch.go)
// knows of the directories of api/ or public/. A directory is listed on
// the first request that reaches it, from the disk, or, in a binary made
// by `zealgo build`, from the compiled registry. Interpreted, the tree
// watches each directory it listed: a file or directory created, removed
// or renamed in one empties the tree and moves its generation on, which
// makes the route cache (route.go) resolve its paths again. Only real
// directories are kept, so the tree never holds more than the disk does.

// routeTree lists the directories below one root (api/ or public/).
type routeTree struct {
	root     string          // absolute, clean, symlinks resolved
	prefix   string          // the root's path relative to the application root: "api" or "public"
	compiled compiledListing // lists the tree of a built binary; nil: the disk (never changes)
	log      *slog.Logger

	gen     atomic.Uint64 // moves on whenever a listing may have changed
	mu      sync.Mutex
	dirs    map[string]*routeDir // by path below root, slash-separated ("" for root)
	watched map[string]bool
	watcher *fsnotify.Watcher // nil when compiled, or when no watcher could be made
	done    chan struct{}     // closed when the watching goroutine ends
}

// routeDir is one directory as the resolver reads it.
type routeDir struct {
	dirs  map[string]bool // subdirectories, hidden ones left out
	files map[string]bool // .go files by name without ".go"
	// param is the name of the level's one-segment parameter, from a
	// [param] directory (paramDir) or a [param].go file (paramFile).
	param               string
	paramDir, paramFile bool
	rest                string // the [...rest].go file's parameter
	// conflict, when not empty, says why the level's parameters are
	// refused: two names at one level.
	conflict string
}

// compiledListing lists the tree of a built binary: the compiled
// registry (registryListing, compiled.go).
type compiledListing interface {
	// paths returns the registered paths that start with prefix.
	paths(prefix string) []string
	// here reports whether the registered file rel serves from this
	// root, abs being where its source would be.
	here(rel, abs string) bool
}

// newRouteTree returns the tree of root, listed from compiled in a
// built binary (nil: from the disk, watched).
func newRouteTree(root, prefix string, compiled compiledListing, log *slog.Logger) *routeTree {
	t := &routeTree{root: root, prefix: prefix, compiled: compiled, log: log,
		dirs: map[string]*routeDir{}, watched: map[string]bool{}}
	if compiled != nil {
		return t
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("zealgo: route parameters: no file watcher; new parameter files need a restart", "dir", prefix, "err", err)
		return t
	}
	t.watcher, t.done = w, make(chan struct{})
	go t.watch()
	return t
}

// generation returns the tree's generation; 0 for a nil tree.
func (t *routeTree) generation() uint64 {
	if t == nil {
		return 0
	}
	return t.gen.Load()
}

// close stops watching.
func (t *routeTree) close() error {
	if t == nil || t.watcher == nil {
		return nil
	}
	err := t.watcher.Close()
	<-t.done
	return err
}

// watch empties the tree on every change to a listed directory's entries.
func (t *routeTree) watch() {
	defer close(t.done)
	for {
		select {
		case ev, ok := <-t.watcher.Events:
			if !ok {
				return
			}
			if ev.Op&(fsnotify.Create|fsnotify.Remove|fsnotify.Rename) != 0 {
				t.invalidate()
			}
		case err, ok := <-t.watcher.Errors:
			if !ok {
				return
			}
			t.log.Warn("zealgo: route parameters: file watcher", "dir", t.prefix, "err", err)
			t.invalidate() // an overflow may have hidden a change
		}
	}
}

// invalidate forgets every listing and moves the generation on.
func (t *routeTree) invalidate() {
	t.mu.Lock()
	t.dirs = map[string]*routeDir{}
	t.watched = map[string]bool{} // a directory removed and made again needs a new watch
	t.gen.Add(1)
	t.mu.Unlock()
}

// noDir is the listing of a directory that does not exist.
var noDir = &routeDir{}

// list returns the directory rel (slash-separated, below the root).
func (t *routeTree) list(rel string) *routeDir {
	t.mu.Lock()
	d := t.dirs[rel]
	t.mu.Unlock()
	if d != nil {
		return d
	}
	gen := t.gen.Load()
	var ok bool
	if t.compiled != nil {
		d, ok = t.listCompiled(rel), true
	} else {
		d, ok = t.listDisk(rel)
	}
	if !ok {
		return noDir
	}
	d.sortParams(t.prefix, rel)
	t.mu.Lock()
	if t.gen.Load() == gen && len(t.dirs) < maxListedDirs { // else listed before a change: not kept
		t.dirs[rel] = d
	}
	t.mu.Unlock()
	return d
}

// maxListedDirs bounds the listings a tree keeps and the directories it
// watches: symlink loops inside the root name endless paths
// (sub/x/x/x/...). Past it a directory is read again each time it is
// searched.
const maxListedDirs = 4096

// abs returns the absolute path of rel.
func (t *routeTree) abs(rel string) string {
	if rel == "" {
		return t.root
	}
	return t.root + string(filepath.Separator) + filepath.FromSlash(rel)
}

// listDisk reads the directory rel from the disk and watches it; ok is
// false when it is no directory.
func (t *routeTree) listDisk(rel string) (*routeDir, bool) {
	abs := t.abs(rel)
	t.watchDir(abs) // before reading: a change while reading is seen
	entries, err := os.ReadDir(abs)
	if err != nil {
		if rel == "" { // no api/ yet: its creation is a change
			t.watchDir(filepath.Dir(abs))
		}
		return nil, false
	}
	d := &routeDir{dirs: map[string]bool{}, files: map[string]bool{}}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		isDir, regular := e.IsDir(), e.Type().IsRegular()
		if e.Type()&fs.ModeSymlink != 0 {
			isDir, regular = t.symlinkKind(filepath.Join(abs, name))
		}
		switch {
		case isDir:
			d.dirs[name] = true
		case regular && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go"):
			d.files[strings.TrimSuffix(name, ".go")] = true
		}
	}
	return d, true
}

// symlinkKind says what the symlink at path leads to; a target outside
// the root counts as nothing.
func (t *routeTree) symlinkKind(path string) (isDir, regular bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil || !within(t.root, real) {
		return false, false
	}
	fi, err := os.Stat(real)
	if err != nil {
		return false, false
	}
	return fi.IsDir(), fi.Mode().IsRegular()
}

// watchDir watches the directory abs, once per generation. The watcher's
// Add runs without t.mu: fsnotify may hold its own lock while it waits for
// watch to take an error, and watch takes t.mu (a hang seen when watched
// directories were renamed while a request listed another). Two callers
// may both add abs, which fsnotify allows.
func (t *routeTree) watchDir(abs string) {
	if t.watcher == nil {
		return
	}
	t.mu.Lock()
	if t.watched[abs] || len(t.watched) >= maxListedDirs {
		t.mu.Unlock()
		return
	}
	gen := t.gen.Load()
	t.mu.Unlock()
	if err := t.watcher.Add(abs); err != nil {
		return
	}
	t.mu.Lock()
	if t.gen.Load() == gen { // else a change may have dropped the watch: add it again next time
		t.watched[abs] = true
	}
	t.mu.Unlock()
}

// listCompiled lists the directory rel from the compiled registry: the
// directories and files its paths name. A path registered only for
// several trees (CompiledFile.MatchSource) counts where its file is on
// the disk.
func (t *routeTree) listCompiled(rel string) *routeDir {
	base := t.prefix + "/"
	if rel != "" {
		base += rel + "/"
	}
	d := &routeDir{dirs: map[string]bool{}, files: map[string]bool{}}
	for _, p := range t.compiled.paths(base) {
		rest := p[len(base):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			if name := rest[:i]; !strings.HasPrefix(name, ".") {
				d.dirs[name] = true
			}
			continue
		}
		if !strings.HasSuffix(rest, ".go") || !t.compiled.here(p, filepath.Join(filepath.Dir(t.root), filepath.FromSlash(p))) {
			continue
		}
		d.files[strings.TrimSuffix(rest, ".go")] = true
	}
	return d
}

// sortParams finds the parameters of d among its entries, and the
// conflict of two names at one level.
func (d *routeDir) sortParams(prefix, rel string) {
	var one, rest []string // "[name]" and where it comes from
	for name := range d.dirs {
		if p, isRest, ok := routepat.Parse(name); ok && !isRest {
			d.param, d.paramDir = p, true
			one = append(one, name+"/")
		}
	}
	for name := range d.files {
		p, isRest, ok := routepat.Parse(name)
		switch {
		case !ok:
		case isRest:
			d.rest = p
			rest = append(rest, name+".go")
		default:
			d.param, d.paramFile = p, true
			one = append(one, name+".go")
		}
	}
	where := prefix
	if rel != "" {
		where += "/" + rel
	}
	if c := levelConflict(where, one); c != "" {
		d.conflict = c
	} else if c := levelConflict(where, rest); c != "" {
		d.conflict = c
	}
}

// levelConflict says why the parameter entries of one level (names such
// as "[slug].go" and "[slug]/") conflict: they name two parameters.
func levelConflict(where string, entries []string) string {
	names := map[string]bool{}
	for _, e := range entries {
		names[routepat.VarName(strings.TrimSuffix(strings.TrimSuffix(e, "/"), ".go"))] = true
	}
	if len(names) < 2 {
		return ""
	}
	sort.Strings(entries)
	for i, e := range entries {
		entries[i] = where + "/" + e
	}
	return "two route parameters at one level: " + strings.Join(entries, " and ") +
		"; a level holds one parameter name, so rename one of them"
}

// conflicts returns the conflicts of the whole tree, each as the entry
// it names first and why.
func (t *routeTree) conflicts() []routeConflict {
	var out []routeConflict
	var walk func(rel string, depth int)
	walk = func(rel string, depth int) {
		d := t.list(rel)
		if d.conflict != "" {
			out = append(out, routeConflict{file: firstEntry(d.conflict), msg: d.conflict})
		}
		if depth > maxRouteDepth {
			return
		}
		names := make([]string, 0, len(d.dirs))
		for name := range d.dirs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			child := joinRel(rel, name)
			if t.compiled == nil { // a symlinked directory is checked where it is (inside the root)
				if fi, err := os.Lstat(t.abs(child)); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
					continue
				}
			}
			walk(child, depth+1)
		}
	}
	walk("", 0)
	return out
}

// maxRouteDepth bounds the walk of conflicts.
const maxRouteDepth = 64

// routeConflict is one conflict: the first entry it names (relative to
// the application root) and the message.
type routeConflict struct{ file, msg string }

// firstEntry returns the first path a conflict message names.
func firstEntry(msg string) string {
	_, after, _ := strings.Cut(msg, ": ")
	first, _, _ := strings.Cut(after, " and ")
	return strings.TrimSuffix(first, "/")
}
