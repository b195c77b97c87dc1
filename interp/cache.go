package interp

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// CacheOptions configures a Cache.
type CacheOptions struct {
	// Debounce is how long a file must stay quiet after a change before it
	// is rebuilt, so that the several writes of one save make one rebuild.
	// Zero means 10ms.
	Debounce time.Duration
	// OnReload, if set, is called after a changed file was rebuilt, with
	// the error of the build (nil when it compiled).
	OnReload func(path string, err error)
	// OnError, if set, receives errors of the file watcher.
	OnError func(err error)
}

// Cache holds one built value per file. A file is built on its first Get;
// when it changes on disk a fresh value is built and swapped in atomically,
// so that callers holding the old value finish with it and the next Get
// returns the new one. A deleted file is dropped. Build errors are cached
// too, until the file changes again; a missing file is never cached.
type Cache[T any] struct {
	build func(path string) (T, error)
	opts  CacheOptions

	mu      sync.Mutex
	entries map[string]*entry[T]
	dirs    map[string]bool
	timers  map[string]*time.Timer
	watcher *fsnotify.Watcher
	closed  bool
	done    chan struct{}
}

type entry[T any] struct {
	build sync.Mutex // one build of a file at a time
	cur   atomic.Pointer[result[T]]
	used  atomic.Int64 // unix nanoseconds of the last Get
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
		dirs: map[string]bool{}, timers: map[string]*time.Timer{}, watcher: w, done: make(chan struct{})}
	go c.watch()
	return c, nil
}

// Get returns the value built from the file at path, building it first if
// the cache does not hold it. The path should be clean and absolute.
func (c *Cache[T]) Get(path string) (T, error) {
	c.mu.Lock()
	e := c.entries[path]
	if e == nil {
		e = &entry[T]{}
		c.entries[path] = e
	}
	c.mu.Unlock()
	e.used.Store(time.Now().UnixNano())
	if r := e.cur.Load(); r != nil {
		return r.val, r.err
	}
	e.build.Lock()
	defer e.build.Unlock()
	if r := e.cur.Load(); r != nil {
		return r.val, r.err
	}
	// Watch before reading, so that a change during the build is seen.
	c.watchDir(filepath.Dir(path))
	v, err := c.build(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.drop(path, e)
		return v, err
	}
	e.cur.Store(&result[T]{val: v, err: err})
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
			delete(c.entries, p)
			n++
		}
	}
	return n
}

// Close stops watching files. Values already handed out stay usable.
func (c *Cache[T]) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for _, t := range c.timers {
		t.Stop()
	}
	c.mu.Unlock()
	err := c.watcher.Close()
	<-c.done
	return err
}

func (c *Cache[T]) drop(path string, e *entry[T]) {
	c.mu.Lock()
	if c.entries[path] == e {
		delete(c.entries, path)
	}
	c.mu.Unlock()
}

func (c *Cache[T]) watchDir(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirs[dir] || c.closed {
		return
	}
	if err := c.watcher.Add(dir); err != nil {
		if c.opts.OnError != nil {
			c.opts.OnError(err)
		}
		return
	}
	c.dirs[dir] = true
}

func (c *Cache[T]) watch() {
	defer close(c.done)
	for {
		select {
		case ev, ok := <-c.watcher.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			c.changed(filepath.Clean(ev.Name))
		case err, ok := <-c.watcher.Errors:
			if !ok {
				return
			}
			if c.opts.OnError != nil {
				c.opts.OnError(err)
			}
		}
	}
}

// changed schedules a rebuild of path after the debounce delay, if the
// cache holds it.
func (c *Cache[T]) changed(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.entries[path] == nil {
		return
	}
	if t := c.timers[path]; t != nil {
		t.Reset(c.opts.Debounce)
		return
	}
	c.timers[path] = time.AfterFunc(c.opts.Debounce, func() { c.rebuild(path) })
}

func (c *Cache[T]) rebuild(path string) {
	c.mu.Lock()
	delete(c.timers, path)
	e := c.entries[path]
	c.mu.Unlock()
	if e == nil {
		return
	}
	e.build.Lock()
	v, err := c.build(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.drop(path, e)
	} else {
		e.cur.Store(&result[T]{val: v, err: err})
	}
	e.build.Unlock()
	if c.opts.OnReload != nil {
		c.opts.OnReload(path, err)
	}
}
