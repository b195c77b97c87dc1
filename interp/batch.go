package interp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Batches: the watcher's events mark the files they concern as pending
// and postpone the batch; once the watched files have been quiet for
// CacheOptions.Debounce, the pending files are rebuilt together and their
// new values swapped in at once (under the cache's lock, under which Get
// reads a value). A batch during which a change was seen is discarded and
// built again once the files are quiet: its builds may have read some
// files from before a checkout and some from after. A first build (Get)
// likewise waits for quiet files and builds again when a change came
// while it read them.

// secondLookDelay is how long after a failed rebuild of a file with a
// working value the file is looked at again, before the failure replaces
// (or, with KeepLastGood, is reported against) the working value: a file
// caught in the middle of a save (truncated, written in parts, or moved
// away while a new one is written) gets its next part first. A change
// meanwhile starts over. A first build that fails on a file written less
// than this ago looks again as long after the write (firstBuild).
const secondLookDelay = 250 * time.Millisecond

// maxQuietWait bounds how long a first build waits for the files to be
// quiet, and maxFirstBuilds how often it builds again when they changed
// while it read them: a tree that never stops changing is built anyway.
const (
	maxQuietWait   = time.Second
	maxFirstBuilds = 3
)

// built is one file's build in a batch.
type built[T any] struct {
	path    string
	e       *entry[T]
	val     T
	err     error
	watched bool // its directory was watched before it was read
	report  bool // OnReload hears of it
}

// changed notes a change at path: the file, if the cache holds it, and
// the files that depend on it join the next batch, which waits for quiet.
// A change that concerns no file the cache holds is no change to it: a
// file written over and over beside the handlers delays no batch.
func (c *Cache[T]) changed(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	now := time.Now()
	pended := c.pendLocked(path, now.UnixNano())
	for _, p := range c.dependentsLocked(path) {
		pended = c.pendLocked(p, now.UnixNano()) || pended
	}
	if pended {
		c.noteLocked(now)
		c.armAheadLocked()
	}
}

// changedAll puts every file the cache holds in the next batch.
func (c *Cache[T]) changedAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	now := time.Now()
	for p := range c.entries {
		c.pendLocked(p, now.UnixNano())
	}
	c.noteLocked(now)
}

// noteLocked counts a change seen at now and (re)starts the wait for
// quiet before the next batch.
func (c *Cache[T]) noteLocked(now time.Time) {
	c.seq++
	c.last = now
	clear(c.ahead.builds) // read from the tree before the change
	c.armLocked()
}

// pendLocked puts path, if the cache holds it, in the next batch, and
// reports whether it does; a second look it waited for is no longer
// needed.
func (c *Cache[T]) pendLocked(path string, now int64) bool {
	e := c.entries[path]
	if e == nil {
		return false
	}
	e.changed.Store(now)
	c.pending[path] = true
	if t := c.looks[path]; t != nil {
		t.Stop()
		delete(c.looks, path)
	}
	return true
}

// armLocked (re)starts the wait for quiet before the next batch.
func (c *Cache[T]) armLocked() {
	if c.closed {
		return
	}
	if c.batch == nil {
		c.batch = time.AfterFunc(c.opts.Debounce, c.runBatch)
		return
	}
	c.batch.Reset(c.opts.Debounce)
}

// dirGone forgets the watches of the directory path, removed or renamed
// away, and of the directories under it: the kernel's watch went with the
// directory (or follows it to its new name), so that one made again at
// path is a new directory to watch. Each file held under path, and each
// that depends on a package under it, joins the next batch, whose build
// watches its directory again first.
func (c *Cache[T]) dirGone(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	prefix := path + string(filepath.Separator)
	gone := false
	for d := range c.dirs {
		if d == path || strings.HasPrefix(d, prefix) {
			delete(c.dirs, d)
			// A subdirectory's watch stays on the directory moved away;
			// a removed directory's is gone already.
			_ = c.watcher.Remove(d)
			gone = true
		}
	}
	if !gone {
		return
	}
	now := time.Now()
	for p := range c.entries {
		if strings.HasPrefix(p, prefix) {
			c.pendLocked(p, now.UnixNano())
		}
	}
	for d, users := range c.users { // dependencies under path
		if d == path || strings.HasPrefix(d, prefix) {
			for p := range users {
				c.pendLocked(p, now.UnixNano())
			}
		}
	}
	c.noteLocked(now)
}

// lookAgainIfUnwatched puts path in the next batch when its directory was
// not there to watch before a build read it (watched false) but is now:
// made meanwhile, as a checkout makes a directory again, its file may
// have been read half written, and no event would tell of the rest.
func (c *Cache[T]) lookAgainIfUnwatched(path string, watched bool) {
	if !watched && c.watchDir(filepath.Dir(path)) {
		c.changed(path)
	}
}

// runBatch rebuilds the pending files once the watched files are quiet,
// and swaps their values in at once, unless something changed meanwhile.
func (c *Cache[T]) runBatch() {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	c.mu.Lock()
	if c.closed || len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	if wait := c.opts.Debounce - time.Since(c.last); wait > 0 { // a change as the timer fired
		c.batch.Reset(wait)
		c.mu.Unlock()
		return
	}
	paths := make([]string, 0, len(c.pending))
	for p := range c.pending {
		paths = append(paths, p)
	}
	clear(c.pending)
	seq := c.seq
	c.mu.Unlock()
	slices.Sort(paths) // the order of the build locks
	batch := c.buildAll(paths, seq)
	defer func() {
		for _, b := range batch {
			b.e.build.Unlock()
		}
	}()
	if !c.commit(batch, seq) {
		return
	}
	for _, b := range batch {
		if !errors.Is(b.err, fs.ErrNotExist) {
			c.lookAgainIfUnwatched(b.path, b.watched)
		}
		if b.report && c.opts.OnReload != nil {
			c.opts.OnReload(b.path, b.err)
		}
	}
}

// buildAll builds each of paths that the cache still holds, holding its
// build lock, which the caller releases; it takes a file's build ahead
// instead when one was made since the batch's count of changes (seq).
func (c *Cache[T]) buildAll(paths []string, seq uint64) []*built[T] {
	var batch []*built[T]
	for _, p := range paths {
		c.mu.Lock()
		e := c.entries[p]
		c.mu.Unlock()
		if e == nil {
			continue
		}
		e.build.Lock()
		if a := c.takeAhead(p, e, seq); a != nil {
			batch = append(batch, &built[T]{path: p, e: e, val: a.val, err: a.err, watched: a.watched})
			continue
		}
		// Watch again before reading: the directory may have been made
		// again (dirGone).
		b := &built[T]{path: p, e: e, watched: c.watchDir(filepath.Dir(p))}
		c.track(p)
		b.val, b.err = c.timedBuild(p, true)
		batch = append(batch, b)
	}
	return batch
}

// commit swaps the values of a batch in, all under the lock, and reports
// true; when a change was seen since the batch began (seq), it puts the
// files back in the next batch instead and reports false.
func (c *Cache[T]) commit(batch []*built[T], seq uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	if c.seq != seq {
		for _, b := range batch {
			if c.entries[b.path] == b.e {
				c.pending[b.path] = true
			}
		}
		c.armLocked()
		return false
	}
	for _, b := range batch {
		b.report = c.settleLocked(b)
	}
	return true
}

// settleLocked applies the build b to its entry and reports whether
// OnReload should hear of it. Called with c.mu held.
func (c *Cache[T]) settleLocked(b *built[T]) bool {
	e := b.e
	if c.entries[b.path] != e {
		return false // dropped meanwhile
	}
	switch {
	case errors.Is(b.err, fs.ErrNotExist):
		c.removeLocked(b.path)
	case b.err != nil && c.firstLookLocked(b.path, e):
		return false
	case b.err != nil && c.opts.KeepLastGood && e.cur.Load() != nil && e.cur.Load().err == nil:
		b.err = fmt.Errorf("%w; %w", b.err, ErrKeptLastGood)
	default:
		e.cur.Store(&result[T]{val: b.val, err: b.err})
	}
	return true
}

// firstLookLocked reports whether a failed rebuild of path should keep
// the working value of e for now: it is the first failure since the
// file's last change, so a second look is scheduled secondLookDelay
// later; a failure at that look, the file unchanged, counts. Called with
// c.mu held.
func (c *Cache[T]) firstLookLocked(path string, e *entry[T]) bool {
	if r := e.cur.Load(); r == nil || r.err != nil {
		return false // nothing working to keep
	}
	changed := e.changed.Load()
	if e.looked.Load() == changed {
		return false
	}
	e.looked.Store(changed)
	if t := c.looks[path]; t != nil {
		t.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(secondLookDelay, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.looks[path] != t {
			return // replaced or dropped by a change meanwhile
		}
		delete(c.looks, path)
		if c.closed || c.entries[path] != e {
			return
		}
		c.pending[path] = true
		c.armLocked()
	})
	c.looks[path] = t
	return true
}

// firstBuild builds path for Get from a quiet tree: it waits for the
// watched files to be quiet, and builds again when a change came while
// it read them. A first build that fails while the file (or a Go file of
// a directory it depends on) was written less than secondLookDelay ago
// takes a second look once that delay has passed since the write, as a
// rebuild does (firstLookLocked): a process started in the middle of a
// save (a new tier's process, or any first request) may read the file
// truncated or half written, before its directory was watched, so no
// event tells of it. A real compile error counts after that look.
// watched reports whether the file's directory was watched before the
// last build read it.
func (c *Cache[T]) firstBuild(path string) (v T, watched bool, err error) {
	looks := 0
	for attempt := 1; ; attempt++ {
		c.waitQuiet()
		seq := c.changes()
		// Watch before reading, so that a change during the build is seen.
		watched = c.watchDir(filepath.Dir(path))
		c.track(path)
		v, err = c.timedBuild(path, false)
		if c.changes() != seq && attempt < maxFirstBuilds {
			continue
		}
		if err == nil || errors.Is(err, fs.ErrNotExist) || looks == maxFirstBuilds || !c.lookAgainLater(path) {
			return v, watched, err
		}
		looks++
	}
}

// lookAgainLater waits, when path or a Go file of a directory it depends
// on was written less than secondLookDelay ago, until that delay has
// passed since the write, and reports whether it waited. An empty path
// waits secondLookDelay whatever its time says: no Go file is empty, and
// a truncating open empties the file at once but may, on a loaded disk,
// take hundreds of milliseconds more (its time seen as the last save's
// meanwhile, as the tier benchmark suggests).
func (c *Cache[T]) lookAgainLater(path string) bool {
	wait := secondLookDelay - time.Since(c.lastWrite(path))
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
		wait = secondLookDelay
	}
	if wait <= 0 {
		return false
	}
	t := time.NewTimer(min(wait, secondLookDelay))
	defer t.Stop()
	select {
	case <-c.done:
		return false
	case <-t.C:
		return true
	}
}

// lastWrite returns the latest modification time of path and of the Go
// files (not _test.go) of the directories it depends on.
func (c *Cache[T]) lastWrite(path string) time.Time {
	var last time.Time
	note := func(p string) {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(last) {
			last = fi.ModTime()
		}
	}
	note(path)
	c.mu.Lock()
	dirs := slices.Clone(c.deps[path])
	c.mu.Unlock()
	for _, d := range dirs {
		names, _ := filepath.Glob(filepath.Join(d, "*.go"))
		for _, n := range names {
			if !strings.HasSuffix(n, "_test.go") {
				note(n)
			}
		}
	}
	return last
}

// changes returns the count of changes seen.
func (c *Cache[T]) changes() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// waitQuiet waits until no change was seen for CacheOptions.Debounce, at
// most maxQuietWait.
func (c *Cache[T]) waitQuiet() {
	deadline := time.Now().Add(maxQuietWait)
	for {
		c.mu.Lock()
		wait := c.opts.Debounce - time.Since(c.last)
		c.mu.Unlock()
		if wait <= 0 || time.Now().After(deadline) {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-c.done:
			t.Stop()
			return
		case <-t.C:
		}
	}
}
