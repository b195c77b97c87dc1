package interp_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/interp"
)

// TestMidSaveEmptyFile checks that a working file caught empty by a rebuild
// (an editor's save truncates, then writes) keeps its value until a second
// look, and that a file left empty gets its build error after all.
func TestMidSaveEmptyFile(t *testing.T) {
	var builds atomic.Int64
	build := func(path string) (string, error) {
		defer builds.Add(1)
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		if len(b) == 0 {
			return "", errors.New("empty file")
		}
		return string(b), nil
	}
	c, err := interp.NewCache(build, interp.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	path := filepath.Join(t.TempDir(), "f.go")
	if err := os.WriteFile(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(path); err != nil || v != "one" {
		t.Fatalf("get: %q %v", v, err)
	}
	n := builds.Load()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rebuild of the empty file", func() bool { return builds.Load() > n })
	if v, err := c.Get(path); err != nil || v != "one" {
		t.Fatalf("right after the empty rebuild: %q %v, want the working value", v, err)
	}
	n = builds.Load()
	eventually(t, "the second look", func() bool { return builds.Load() > n })
	eventually(t, "the error of a file left empty", func() bool {
		_, err := c.Get(path)
		return err != nil && err.Error() == "empty file"
	})
	if err := os.WriteFile(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new content", func() bool {
		v, err := c.Get(path)
		return err == nil && v == "two"
	})
}

// TestMidSaveEmptyDependency: the same grace holds when the file caught
// empty is a Go file of a directory the cached file depends on.
func TestMidSaveEmptyDependency(t *testing.T) {
	dir := t.TempDir()
	path, dep := filepath.Join(dir, "f.go"), filepath.Join(dir, "lib", "lib.go")
	if err := os.MkdirAll(filepath.Dir(dep), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{path: "f", dep: "one"} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var builds atomic.Int64
	build := func(string) (string, error) {
		defer builds.Add(1)
		b, err := os.ReadFile(dep)
		if err != nil {
			return "", err
		}
		if len(b) == 0 {
			return "", errors.New("empty dependency")
		}
		return string(b), nil
	}
	c, err := interp.NewCache(build, interp.CacheOptions{Deps: func(string) []string { return []string{filepath.Dir(dep)} }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := c.Get(path); err != nil || v != "one" {
		t.Fatalf("get: %q %v", v, err)
	}
	n := builds.Load()
	if err := os.Truncate(dep, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rebuild with the empty dependency", func() bool { return builds.Load() > n })
	if v, err := c.Get(path); err != nil || v != "one" {
		t.Fatalf("right after the empty rebuild: %q %v, want the working value", v, err)
	}
	eventually(t, "the error of a dependency left empty", func() bool {
		_, err := c.Get(path)
		return err != nil && err.Error() == "empty dependency"
	})
	if err := os.WriteFile(dep, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new content", func() bool { v, err := c.Get(path); return err == nil && v == "two" })
}

// TestMidSaveFirstBuild checks that the first build of a file caught in
// the middle of a save (a new process's first request: its directory was
// not watched yet, so no event tells of the rest of the save) takes a
// second look instead of caching the half-written file's error, and that
// a real error still counts: at once for a file written long ago, after
// the second look for one just written.
func TestMidSaveFirstBuild(t *testing.T) {
	dir := t.TempDir()
	saving, broken, old := filepath.Join(dir, "saving.go"), filepath.Join(dir, "broken.go"), filepath.Join(dir, "old.go")
	for _, p := range []string{saving, broken, old} {
		if err := os.WriteFile(p, nil, 0o644); err != nil { // truncated: the save's first part
			t.Fatal(err)
		}
	}
	// A broken file written long ago is not empty: an empty one is taken
	// for a save under way whatever its time (lookAgainLater).
	if err := os.WriteFile(old, []byte("broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	builds := map[string]*atomic.Int64{saving: {}, broken: {}, old: {}}
	build := func(path string) (string, error) {
		builds[path].Add(1)
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		if string(b) == "broken" {
			return "", errors.New("expected 'package', found broken")
		}
		if len(b) == 0 {
			if path == saving && builds[path].Load() == 1 {
				// The rest of the save lands just after this build.
				returned := make(chan struct{})
				defer close(returned)
				go func() {
					<-returned
					_ = os.WriteFile(path, []byte("saved"), 0o644)
				}()
			}
			return "", errors.New("expected 'package', found 'EOF'")
		}
		return string(b), nil
	}
	c, err := interp.NewCache(build, interp.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := c.Get(saving); err != nil || v != "saved" {
		t.Fatalf("first get of a file caught mid-save: %q %v, want the saved content", v, err)
	}
	if err := os.WriteFile(broken, nil, 0o644); err != nil { // written again just now
		t.Fatal(err)
	}
	// Its own write may also be seen as a change during a build, which
	// builds it once more (at most maxFirstBuilds in all, and looks).
	if _, err := c.Get(broken); err == nil || builds[broken].Load() < 2 {
		t.Fatalf("a file just written and left broken: %v after %d builds, want its error after a second look", err, builds[broken].Load())
	}
	if _, err := c.Get(old); err == nil || builds[old].Load() != 1 {
		t.Fatalf("a broken file written long ago: %v after %d builds, want its error at once", err, builds[old].Load())
	}
}
