package interp

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// contentLog is a build function that records what each build read.
type contentLog struct {
	mu    sync.Mutex
	reads []string
}

func (l *contentLog) build(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	l.mu.Lock()
	l.reads = append(l.reads, string(b))
	l.mu.Unlock()
	if len(b) == 0 {
		return "", errors.New("empty file")
	}
	return string(b), nil
}

func (l *contentLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reads)
}

// quietCache returns a cache whose timers do not fire within a test (a
// debounce of an hour): the test runs its build ahead and its batch.
func quietCache(t *testing.T, l *contentLog) (*Cache[string], string) {
	t.Helper()
	c, err := NewCache(l.build, CacheOptions{Debounce: time.Hour, KeepLastGood: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	path := filepath.Join(t.TempDir(), "f.go")
	if err := os.WriteFile(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(path); err != nil || v != "one" {
		t.Fatalf("get: %q %v", v, err)
	}
	return c, path
}

// save changes path with one event the watcher sees: s replaces the file
// (renamed into place), an empty s truncates it, and with add set s is
// written after what the file holds (a save's second step). It waits
// until the cache has seen the change.
func save(t *testing.T, c *Cache[string], path, s string, add bool) {
	t.Helper()
	seq := c.changes()
	var err error
	switch {
	case add:
		var f *os.File
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			_, err = f.WriteString(s)
			err = errors.Join(err, f.Close())
		}
	case s == "":
		err = os.Truncate(path, 0)
	default:
		tmp := path + ".tmp"
		if err = os.WriteFile(tmp, []byte(s), 0o644); err == nil {
			err = os.Rename(tmp, path)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if !testutil.Poll(5*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.seq > seq && c.pending[path]
	}) {
		t.Fatalf("the change to %q was not seen", s)
	}
}

// runBatchNow runs the batch as its timer would once the files are quiet.
func runBatchNow(c *Cache[string]) {
	c.mu.Lock()
	c.last = time.Time{}
	c.mu.Unlock()
	c.runBatch()
}

// TestBuildAheadTaken: a file saved is built ahead of its batch, which
// swaps that build in without building the file again; a change after
// the build ahead voids it, and the batch builds the file as it is.
func TestBuildAheadTaken(t *testing.T) {
	l := &contentLog{}
	c, path := quietCache(t, l)
	save(t, c, path, "two", false)
	c.startAhead()
	if got := l.get(); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("builds after the build ahead: %q", got)
	}
	if v, _ := c.Get(path); v != "one" {
		t.Fatalf("the build ahead went live before its batch: %q", v)
	}
	runBatchNow(c)
	if v, err := c.Get(path); err != nil || v != "two" {
		t.Fatalf("after the batch: %q %v", v, err)
	}
	if got := l.get(); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("the batch built again instead of taking the build ahead: %q", got)
	}

	save(t, c, path, "three", false)
	c.startAhead()
	save(t, c, path, "four", false)
	runBatchNow(c)
	if v, err := c.Get(path); err != nil || v != "four" {
		t.Fatalf("after a change that voided the build ahead: %q %v", v, err)
	}
	if got := l.get(); !slices.Equal(got, []string{"one", "two", "three", "four"}) {
		t.Fatalf("builds: %q, want the batch to build the file as it is", got)
	}
}

// TestSplitSaveLiveAtSecondWrite: a save in two steps whose gap exceeds
// the debounce (truncate, a batch builds the empty file, then write) goes
// live with the write's own batch: the second look at the empty file,
// scheduled for secondLookDelay later, is cancelled by the write and
// never happens, and the empty file never replaced the working value.
func TestSplitSaveLiveAtSecondWrite(t *testing.T) {
	l := &contentLog{}
	c, path := quietCache(t, l)
	save(t, c, path, "", false)
	runBatchNow(c)
	c.mu.Lock()
	looking := c.looks[path] != nil
	c.mu.Unlock()
	if !looking {
		t.Fatal("no second look scheduled after the empty build")
	}
	if v, err := c.Get(path); err != nil || v != "one" {
		t.Fatalf("after the empty build: %q %v, want the working value", v, err)
	}
	save(t, c, path, "two", true)
	c.mu.Lock()
	looking = c.looks[path] != nil
	c.mu.Unlock()
	if looking {
		t.Fatal("the second write left the second look scheduled")
	}
	runBatchNow(c)
	if v, err := c.Get(path); err != nil || v != "two" {
		t.Fatalf("after the second write's batch: %q %v", v, err)
	}
	if got := l.get(); !slices.Equal(got, []string{"one", "", "two"}) {
		t.Fatalf("builds: %q", got)
	}
}

// TestBuildAheadStaleTree: a build ahead made from a tree that differs
// from the one the batch sees (a write whose event has not come yet,
// here simulated by the sum it was made from) is not taken: the batch
// builds the file as it is.
func TestBuildAheadStaleTree(t *testing.T) {
	l := &contentLog{}
	c, path := quietCache(t, l)
	save(t, c, path, "two", false)
	c.startAhead()
	c.mu.Lock()
	a := c.ahead.builds[path]
	if a != nil {
		a.sum[0]++
	}
	c.mu.Unlock()
	if a == nil {
		t.Fatal("no build ahead")
	}
	runBatchNow(c)
	if v, err := c.Get(path); err != nil || v != "two" {
		t.Fatalf("after the batch: %q %v", v, err)
	}
	if got := l.get(); !slices.Equal(got, []string{"one", "two", "two"}) {
		t.Fatalf("builds: %q, want the batch to build again", got)
	}
}

// TestFirstBuildEmptyFileLooksAgain: a first build that reads an empty
// file whose modification time is old (a truncating open still under
// way: the size changes first, the time at the end) looks again before
// the error counts, and serves the file once its write lands.
func TestFirstBuildEmptyFileLooksAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.go")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	sawEmpty := make(chan struct{})
	var once sync.Once
	l := &contentLog{}
	build := func(p string) (string, error) {
		v, err := l.build(p)
		if v == "" {
			once.Do(func() { close(sawEmpty) })
		}
		return v, err
	}
	c, err := NewCache(build, CacheOptions{KeepLastGood: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type got struct {
		v   string
		err error
	}
	res := make(chan got, 1)
	go func() { v, err := c.Get(path); res <- got{v, err} }()
	<-sawEmpty
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("one"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil || r.v != "one" {
		t.Fatalf("first Get: %q %v, want the file as written after its truncation", r.v, r.err)
	}
}
