package interp

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// CacheOptions configures a Cache.
type CacheOptions struct {
	// Debounce is how long the watched files must all stay quiet after a
	// change before the changed files are rebuilt, so that the several
	// writes of one save make one rebuild, and the many files a checkout
	// or a deploy writes within it make one batch (batch.go). Zero means
	// 10ms.
	Debounce time.Duration
	// OnReload, if set, is called after a changed file was rebuilt, with
	// the error of the build (nil when it compiled).
	OnReload func(path string, err error)
	// OnError, if set, receives errors of the file watcher.
	OnError func(err error)
	// MaxEntries, if positive, bounds how many files the cache holds:
	// building one more drops the least recently used others, which are
	// built again on their next Get. Zero means no bound.
	MaxEntries int
	// IdleTTL, if positive, drops the value of a file not asked for within
	// it; the file is built again on its next Get. Zero means never.
	IdleTTL time.Duration
	// Observer, if set, is told of every build (observer.go).
	Observer Observer
	// Deps, if set, returns the directories whose Go files a file's build
	// reads besides the file itself (the application packages it imports:
	// Dependencies). It is asked before each build; a change to a .go file
	// in one of them (not a _test.go file), or the directory appearing or
	// going away, rebuilds the file as a change to the file itself does.
	Deps func(path string) []string
	// KeepLastGood keeps the value of a file that built when a rebuild
	// after a change fails: Get returns it until a rebuild succeeds or the
	// file is removed, and OnReload receives the build error wrapping
	// ErrKeptLastGood. Without it, the failure replaces the value.
	KeepLastGood bool
}

// ErrKeptLastGood is wrapped in the error OnReload receives when
// KeepLastGood kept the previous value of a file that failed to rebuild.
var ErrKeptLastGood = errors.New("the last version that built keeps serving")

// Cache holds one built value per file. A file is built on its first Get;
// when it or one of its dependencies (CacheOptions.Deps) changes on disk a
// fresh value is built and swapped in atomically, so that callers holding
// the old value finish with it and the next Get returns the new one. A
// deleted file is dropped. Build errors are cached too, until the file
// changes again; a missing file is never cached.
//
// Changes are taken in batches (batch.go): the files changed while the
// watched files were not quiet for CacheOptions.Debounce are rebuilt
// together once they are, from a tree that no longer changes, and their
// new values are swapped in at once; a batch during which something
// changed again is discarded and built again. So a file and the
// application packages it imports are read from the same side of a
// checkout. A directory removed and made again, or replaced by another
// renamed into its place, is followed: its files are rebuilt, the new
// directory watched before they are read. Lost events (the kernel's
// queue overflowed) rebuild every file.
type Cache[T any] struct {
	build func(path string) (T, error)
	opts  CacheOptions

	mu      sync.Mutex
	entries map[string]*entry[T]
	dirs    map[string]bool
	pending map[string]bool            // files to rebuild in the next batch
	looks   map[string]*time.Timer     // second looks at files that failed (batch.go)
	batch   *time.Timer                // runs the batch once the files are quiet
	seq     uint64                     // changes seen
	last    time.Time                  // when the last change was seen
	batchMu sync.Mutex                 // one batch at a time
	deps    map[string][]string        // file -> the directories it depends on
	users   map[string]map[string]bool // directory -> the files that depend on it
	ahead   aheadState[T]              // builds ahead of the next batch (buildahead.go)
	watcher *fsnotify.Watcher
	closed  bool
	done    <-chan struct{} // closed when the watcher's reports are all handled
}

type entry[T any] struct {
	build sync.Mutex // one build of a file at a time
	cur   atomic.Pointer[result[T]]
	used  atomic.Int64 // unix nanoseconds of the last Get
	// changed is when the watcher last saw the file change (unix
	// nanoseconds): a failed rebuild counts only after a quiet period.
	changed atomic.Int64
	// looked is the changed stamp at which a failed rebuild was already
	// looked at once (batch.go).
	looked atomic.Int64
}

type result[T any] struct {
	val T
	err error
}

// NewCache returns a cache that builds values with build and watches the
// directories of the files it holds.
func NewCache[T any](build func(path string) (T, error), opts CacheOptions) (*Cache[T], error) {
	if opts.Debounce == 0 {
		opts.Debounce = 10 * time.Millisecond
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, errors.Join(errors.New("interp: file watcher"), err)
	}
	c := &Cache[T]{build: build, opts: opts, entries: map[string]*entry[T]{},
		dirs: map[string]bool{}, pending: map[string]bool{}, looks: map[string]*time.Timer{}, deps: map[string][]string{},
		users: map[string]map[string]bool{}, watcher: w}
	c.ahead.builds = map[string]*aheadBuild[T]{}
	c.done = relay(w, c.onWatch)
	if opts.IdleTTL > 0 {
		go c.sweep()
	}
	return c, nil
}

// Get returns the value built from the file at path, building it first if
// the cache does not hold it. The path should be clean and absolute.
func (c *Cache[T]) Get(path string) (T, error) {
	now := time.Now().UnixNano()
	c.mu.Lock()
	e := c.entries[path]
	if e != nil && c.opts.IdleTTL > 0 && e.used.Load() < now-int64(c.opts.IdleTTL) {
		e = nil // idle too long: built again, as if the sweep had dropped it
	}
	if e == nil {
		e = &entry[T]{}
		c.entries[path] = e
	}
	e.used.Store(now)
	r := e.cur.Load() // under the lock: a batch swaps its values in at once
	c.mu.Unlock()
	if r != nil {
		return r.val, r.err
	}
	e.build.Lock()
	defer e.build.Unlock()
	if r := e.cur.Load(); r != nil {
		return r.val, r.err
	}
	v, watched, err := c.firstBuild(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.drop(path, e)
		return v, err
	}
	e.cur.Store(&result[T]{val: v, err: err})
	c.bound(e)
	c.lookAgainIfUnwatched(path, watched)
	return v, err
}

// Len returns the number of files the cache holds.
func (c *Cache[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Evict drops the values of files not asked for since before the given
// time, and returns how many it dropped. They are built again on their next
// Get.
func (c *Cache[T]) Evict(before time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for p, e := range c.entries {
		if e.used.Load() < before.UnixNano() {
			c.removeLocked(p)
			n++
		}
	}
	return n
}

// bound drops the least recently used entries other than keep while the
// cache holds more than MaxEntries.
func (c *Cache[T]) bound(keep *entry[T]) {
	if c.opts.MaxEntries <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.entries) > c.opts.MaxEntries {
		var (
			oldest string
			min    int64
			found  bool
		)
		for p, e := range c.entries {
			if e == keep {
				continue
			}
			if u := e.used.Load(); !found || u < min {
				oldest, min, found = p, u, true
			}
		}
		if !found {
			return
		}
		c.removeLocked(oldest)
	}
}

// sweep drops idle values every half IdleTTL until the cache is closed.
func (c *Cache[T]) sweep() {
	t := time.NewTicker(max(c.opts.IdleTTL/2, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			c.Evict(now.Add(-c.opts.IdleTTL))
		}
	}
}

// Close stops watching files. Values already handed out stay usable.
func (c *Cache[T]) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for _, t := range c.looks {
		t.Stop()
	}
	if c.batch != nil {
		c.batch.Stop()
	}
	if c.ahead.timer != nil {
		c.ahead.timer.Stop()
	}
	c.mu.Unlock()
	err := c.watcher.Close()
	<-c.done
	c.ahead.wg.Wait()
	return err
}

func (c *Cache[T]) drop(path string, e *entry[T]) {
	c.mu.Lock()
	if c.entries[path] == e {
		c.removeLocked(path)
	}
	c.mu.Unlock()
}

// removeLocked forgets the file path: its value and its dependencies.
// Called with c.mu held.
func (c *Cache[T]) removeLocked(path string) {
	delete(c.entries, path)
	delete(c.ahead.builds, path)
	c.untrackLocked(path)
}

// watchDir watches dir, unless it is watched already, and reports
// whether it is.
func (c *Cache[T]) watchDir(dir string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirs[dir] || c.closed {
		return c.dirs[dir]
	}
	if err := c.watcher.Add(dir); err != nil {
		// A directory that does not exist holds no file to build: the
		// build says so, and a request for a missing path is no error
		// worth a log line.
		if !IsNotFound(err) && c.opts.OnError != nil {
			c.opts.OnError(err)
		}
		return false
	}
	c.dirs[dir] = true
	return true
}

// onWatch handles one thing the watcher reported (relay calls it).
func (c *Cache[T]) onWatch(it watchItem) {
	if it.err != nil {
		if errors.Is(it.err, fsnotify.ErrEventOverflow) {
			c.changedAll() // events were lost: any file may have changed
		}
		if c.opts.OnError != nil {
			c.opts.OnError(it.err)
		}
		return
	}
	if it.ev.Op == fsnotify.Chmod {
		return
	}
	name := filepath.Clean(it.ev.Name)
	if it.ev.Has(fsnotify.Remove) || it.ev.Has(fsnotify.Rename) {
		c.dirGone(name)
	}
	c.changed(name)
}

// track asks CacheOptions.Deps for the directories path depends on, watches
// them, and records them for changed. Called before each build of path,
// so that a change during the build is seen.
func (c *Cache[T]) track(path string) {
	if c.opts.Deps == nil {
		return
	}
	dirs := c.opts.Deps(path)
	for _, d := range dirs {
		c.watchDep(d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.untrackLocked(path)
	if len(dirs) == 0 {
		return
	}
	c.deps[path] = dirs
	for _, d := range dirs {
		if c.users[d] == nil {
			c.users[d] = map[string]bool{}
		}
		c.users[d][path] = true
	}
}

// untrackLocked forgets the dependencies of path. Called with c.mu held.
func (c *Cache[T]) untrackLocked(path string) {
	for _, d := range c.deps[path] {
		delete(c.users[d], path)
		if len(c.users[d]) == 0 {
			delete(c.users, d)
		}
	}
	delete(c.deps, path)
}

// watchDep watches the dependency directory dir or, while it does not
// exist, its closest existing parent, so that its creation is seen.
func (c *Cache[T]) watchDep(dir string) {
	for {
		if _, err := os.Stat(dir); err == nil {
			c.watchDir(dir)
			return
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return
		}
		dir = parent
	}
}

// dependentsLocked returns the files that depend on what changed at path:
// a Go file in one of their directories, or such a directory (or one of
// its parents) appearing or going away. Called with c.mu held.
func (c *Cache[T]) dependentsLocked(path string) []string {
	var out []string
	if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
		for p := range c.users[filepath.Dir(path)] {
			out = append(out, p)
		}
	}
	for d, users := range c.users {
		if d == path || strings.HasPrefix(d, path+string(filepath.Separator)) {
			for p := range users {
				out = append(out, p)
			}
		}
	}
	return out
}
