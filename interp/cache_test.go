package interp_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/interp"
)

// readBuild is a build func that returns the file's text and counts builds.
func readBuild(n *atomic.Int64) func(string) (string, error) {
	return func(path string) (string, error) {
		n.Add(1)
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		if string(b) == "bad" {
			return "", errors.New("bad content")
		}
		return string(b), nil
	}
}

func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	if !testutil.Poll(5*time.Second, f) {
		t.Fatalf("gave up waiting for %s", what)
	}
}

func TestCacheLazyReloadDrop(t *testing.T) {
	var builds atomic.Int64
	var reloads atomic.Int64
	obs := &buildLog{}
	c, err := interp.NewCache(readBuild(&builds), interp.CacheOptions{
		OnReload: func(string, error) { reloads.Add(1) },
		Observer: obs,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	path := filepath.Join(t.TempDir(), "f.go")
	if _, err := c.Get(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if c.Len() != 0 || len(obs.get()) != 0 {
		t.Fatalf("a missing file was cached (%d) or reported as a build (%q)", c.Len(), obs.get())
	}
	os.WriteFile(path, []byte("one"), 0o644)
	loads := func() int { return strings.Count(strings.Join(obs.get(), "\n"), "f.go load ") }
	if v, err := c.Get(path); err != nil || v != "one" {
		t.Fatalf("get: %q %v", v, err)
	}
	first := loads()
	// The first get builds (again, if a change came while it read the
	// file); the write's events may rebuild it later, in a batch (a
	// reload). But a later get never builds by itself: however late the
	// watcher's events come, no further load is reported.
	for i := 0; i < 2; i++ {
		if v, err := c.Get(path); err != nil || v != "one" {
			t.Fatalf("get: %q %v", v, err)
		}
	}
	if first < 1 || loads() != first {
		t.Fatalf("loads: %d after the first get, %d after two more (%q)", first, loads(), obs.get())
	}
	os.WriteFile(path, []byte("bad"), 0o644)
	eventually(t, "the build error", func() bool { _, err := c.Get(path); return err != nil && err.Error() == "bad content" })
	os.WriteFile(path, []byte("two"), 0o644)
	eventually(t, "two", func() bool { v, _ := c.Get(path); return v == "two" })
	os.Remove(path)
	eventually(t, "the drop", func() bool { _, err := c.Get(path); return errors.Is(err, os.ErrNotExist) })
	if reloads.Load() < 3 {
		t.Fatalf("%d reloads reported", reloads.Load())
	}
}

func TestCacheConcurrentFirstGetBuildsOnce(t *testing.T) {
	var builds atomic.Int64
	release := make(chan struct{})
	c, err := interp.NewCache(func(path string) (string, error) {
		builds.Add(1)
		<-release // the other gets come while the first builds
		return "v", nil
	}, interp.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	path := filepath.Join(t.TempDir(), "f.go")
	var wg, getting sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		getting.Add(1)
		go func() { defer wg.Done(); getting.Done(); c.Get(path) }()
	}
	getting.Wait()
	testutil.WaitFor(t, 5*time.Second, "the first build", func() bool { return builds.Load() > 0 })
	close(release)
	wg.Wait()
	if builds.Load() != 1 {
		t.Fatalf("%d builds, want 1", builds.Load())
	}
}

func TestCacheEvict(t *testing.T) {
	var builds atomic.Int64
	c, err := interp.NewCache(readBuild(&builds), interp.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go")
	os.WriteFile(a, []byte("a"), 0o644)
	os.WriteFile(b, []byte("b"), 0o644)
	c.Get(a)
	mid := time.Now()
	testutil.WaitFor(t, time.Second, "the clock to pass mid", func() bool { return time.Now().After(mid) })
	c.Get(b)
	if n := c.Evict(mid); n != 1 || c.Len() != 1 {
		t.Fatalf("evicted %d, %d left", n, c.Len())
	}
	if v, err := c.Get(a); v != "a" || err != nil || builds.Load() != 3 {
		t.Fatalf("rebuild after evict: %q %v, %d builds", v, err, builds.Load())
	}
}

// buildLog is an Observer that keeps what it is told.
type buildLog struct {
	mu     sync.Mutex
	builds []string // "load ok", "reload error", ...
}

func (b *buildLog) Built(path string, reload bool, d time.Duration, err error) {
	kind, res := "load", "ok"
	if reload {
		kind = "reload"
	}
	if err != nil {
		res = "error"
	}
	if d < 0 {
		res = "negative duration"
	}
	b.mu.Lock()
	b.builds = append(b.builds, filepath.Base(path)+" "+kind+" "+res)
	b.mu.Unlock()
}

func (b *buildLog) get() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.builds...)
}

// TestCacheObserver: the observer hears of the first build, of each
// rebuild after a change (failed ones too), and not of a missing file.
func TestCacheObserver(t *testing.T) {
	var builds atomic.Int64
	obs := &buildLog{}
	c, err := interp.NewCache(readBuild(&builds), interp.CacheOptions{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dir := t.TempDir()
	if _, err := c.Get(filepath.Join(dir, "missing.go")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	path := filepath.Join(dir, "f.go")
	os.WriteFile(path, []byte("one"), 0o644)
	if _, err := c.Get(path); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("bad"), 0o644)
	eventually(t, "a failed reload", func() bool { return slices.Contains(obs.get(), "f.go reload error") })
	os.WriteFile(path, []byte("two"), 0o644)
	eventually(t, "a reload", func() bool { got := obs.get(); return got[len(got)-1] == "f.go reload ok" })
	// The observer hears every build, and a build may be made again when
	// the event of a write before it arrives while it reads the file (the
	// events come through a relay): so the test asks for the first build,
	// then the failed reload, then a good one last, and nothing else.
	got := obs.get()
	known := map[string]bool{"f.go load ok": true, "f.go reload error": true, "f.go reload ok": true}
	for _, g := range got {
		if !known[g] {
			t.Fatalf("observer heard %q in %q", g, got)
		}
	}
	if got[0] != "f.go load ok" || slices.Index(got, "f.go reload error") < 1 {
		t.Fatalf("observer heard %q, want the first build, then a failed reload, then a reload", got)
	}
}

// TestCacheFollowsReplacedDirectory: a file's directory removed and made
// again, then renamed away and replaced by another: the cache follows the
// new directory, so a later write to the file is seen each time (issue
// 30, item 2).
func TestCacheFollowsReplacedDirectory(t *testing.T) {
	var builds atomic.Int64
	c, err := interp.NewCache(readBuild(&builds), interp.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dir := filepath.Join(t.TempDir(), "sub")
	path := filepath.Join(dir, "f.go")
	write := func(d, text string) {
		t.Helper()
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f.go"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	serves := func(want string) {
		t.Helper()
		eventually(t, "the value "+want, func() bool { v, err := c.Get(path); return err == nil && v == want })
	}
	write(dir, "one")
	serves("one")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	write(dir, "two")
	serves("two")
	write(dir, "three") // in the directory made again
	serves("three")
	write(dir+".next", "four")
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".next", dir); err != nil {
		t.Fatal(err)
	}
	serves("four")
	write(dir, "five") // in the directory renamed into place
	serves("five")
	write(dir+".old", "stale") // the one renamed away is not followed
	write(dir, "six")
	serves("six")
}
