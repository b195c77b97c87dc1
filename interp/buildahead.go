package interp

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Builds ahead: when a change leaves a few files in the next batch (an
// editor's save, not a checkout), they are built once the files have been
// quiet for half the debounce, while the batch waits for the rest of it,
// and the batch takes those builds instead of building again when nothing
// changed since they began: they read the same tree it would. So a save
// goes live about one debounce after its last write, rather than one
// debounce and one build: on a loaded machine a build takes from one to
// tens of milliseconds. (The half debounce lets the writes of one save,
// truncate then write, make one build.) A change during a build ahead
// voids it (noteLocked), and the next quiet half debounce builds again;
// one build ahead runs at a time. The batch takes a build ahead only if
// the file and the Go files of the directories it depends on hold the
// same bytes as when the build ahead began (treeSum): a write whose event
// is late must not leave a build of the tree before it in place of what
// the batch would read, so a file and its packages are still read from
// the same side of a checkout that writes them within the debounce. They are builds like any other for the
// Observer; OnReload hears only of what a batch swapped in.

// maxBuildAhead is how many pending files are built ahead at most: more
// is a checkout or a change to a package many files import, which the
// batch builds once the tree is quiet, as before.
const maxBuildAhead = 4

// aheadState is the cache's builds ahead, under its lock.
type aheadState[T any] struct {
	builds  map[string]*aheadBuild[T] // made from the tree as it is: any change clears them
	timer   *time.Timer               // starts a build ahead after half a debounce of quiet
	running bool                      // a build ahead is under way
	again   bool                      // its timer fired while it ran
	wg      sync.WaitGroup            // Close waits for it
}

// aheadBuild is a file's build ahead of its batch.
type aheadBuild[T any] struct {
	e       *entry[T]
	seq     uint64   // the count of changes seen when it began
	sum     [32]byte // treeSum when it began
	val     T
	err     error
	watched bool
}

// armAheadLocked (re)starts the wait of half a debounce before the
// pending files are built ahead, unless there are too many of them.
// Called with c.mu held.
func (c *Cache[T]) armAheadLocked() {
	if c.closed || len(c.pending) > maxBuildAhead {
		return
	}
	if c.ahead.timer == nil {
		c.ahead.timer = time.AfterFunc(c.opts.Debounce/2, c.startAhead)
		return
	}
	c.ahead.timer.Reset(c.opts.Debounce / 2)
}

// startAhead builds the pending files ahead of their batch, or asks the
// build ahead under way to go again.
func (c *Cache[T]) startAhead() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	if c.ahead.running {
		c.ahead.again = true
		c.mu.Unlock()
		return
	}
	c.ahead.running = true
	c.ahead.wg.Add(1)
	c.mu.Unlock()
	c.buildAhead()
}

// buildAhead builds the pending files, each under its build lock, and
// keeps the builds that no change overtook for the batch; it goes again
// as long as changes came meanwhile.
func (c *Cache[T]) buildAhead() {
	defer c.ahead.wg.Done()
	for {
		c.mu.Lock()
		if c.closed || len(c.pending) == 0 || len(c.pending) > maxBuildAhead {
			c.ahead.running = false
			c.mu.Unlock()
			return
		}
		paths := make([]string, 0, len(c.pending))
		for p := range c.pending {
			paths = append(paths, p)
		}
		seq := c.seq
		c.ahead.again = false
		c.mu.Unlock()
		slices.Sort(paths)
		for _, p := range paths {
			if !c.buildOneAhead(p, seq) {
				break
			}
		}
		c.mu.Lock()
		if !c.ahead.again {
			c.ahead.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// buildOneAhead builds path ahead of its batch and keeps the build if no
// change came since seq; it reports whether none did.
func (c *Cache[T]) buildOneAhead(path string, seq uint64) bool {
	c.mu.Lock()
	e := c.entries[path]
	c.mu.Unlock()
	if e == nil {
		return true
	}
	e.build.Lock()
	defer e.build.Unlock()
	c.mu.Lock()
	taken := !c.pending[path] // by the batch, which built it or took the build ahead
	c.mu.Unlock()
	if taken {
		return true
	}
	b := &aheadBuild[T]{e: e, seq: seq, watched: c.watchDir(filepath.Dir(path))}
	c.track(path)
	b.sum = c.treeSum(path)
	b.val, b.err = c.timedBuild(path, true)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seq != seq || c.entries[path] != e {
		return false
	}
	c.ahead.builds[path] = b // before the build lock goes: the batch waits on it
	return true
}

// takeAhead returns the build ahead of path for the batch that began at
// seq, if one was made from the same tree as the batch sees, and forgets
// it. Called with the file's build lock held.
func (c *Cache[T]) takeAhead(path string, e *entry[T], seq uint64) *aheadBuild[T] {
	c.mu.Lock()
	b := c.ahead.builds[path]
	delete(c.ahead.builds, path)
	c.mu.Unlock()
	if b == nil || b.e != e || b.seq != seq || c.treeSum(path) != b.sum {
		return nil
	}
	return b
}

// treeSum hashes what a build of path reads: the file and the Go files
// (not _test.go) of the directories it depends on, by name and content.
// A file that cannot be read counts as missing.
func (c *Cache[T]) treeSum(path string) [32]byte {
	h := sha256.New()
	add := func(p string) {
		b, err := os.ReadFile(p)
		fmt.Fprintf(h, "%s\x00%d\x00%t\x00", p, len(b), err == nil)
		h.Write(b)
	}
	add(path)
	c.mu.Lock()
	dirs := slices.Clone(c.deps[path])
	c.mu.Unlock()
	for _, d := range dirs {
		names, _ := filepath.Glob(filepath.Join(d, "*.go")) // sorted
		for _, n := range names {
			if !strings.HasSuffix(n, "_test.go") {
				add(n)
			}
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}
