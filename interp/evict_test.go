package interp_test

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/interp"
)

// TestEvictCache checks the bounds of a cache over real files: MaxEntries
// drops the least recently used, IdleTTL drops idle files in the
// background, and a dropped file is built again, from its current text.
func TestEvictCache(t *testing.T) {
	dir := t.TempDir()
	path := func(n string) string { return filepath.Join(dir, n) }
	for _, n := range []string{"a", "b", "c"} {
		if err := os.WriteFile(path(n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("max entries", func(t *testing.T) {
		var builds atomic.Int64
		c, err := interp.NewCache(readBuild(&builds), interp.CacheOptions{MaxEntries: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		steps := []struct {
			file   string
			builds int64
			len    int
		}{
			{"a", 1, 1}, {"b", 2, 2}, {"a", 2, 2}, {"c", 3, 2}, // c drops b
			{"a", 3, 2}, {"b", 4, 2}, // b built again, drops c
			{"c", 5, 2},
		}
		for i, s := range steps {
			if v, err := c.Get(path(s.file)); err != nil || v != s.file {
				t.Fatalf("step %d: get %s: %q %v", i, s.file, v, err)
			}
			if builds.Load() != s.builds || c.Len() != s.len {
				t.Fatalf("step %d (%s): %d builds, %d held; want %d, %d", i, s.file, builds.Load(), c.Len(), s.builds, s.len)
			}
		}
		// A dropped file comes back with its current text.
		if err := os.WriteFile(path("a"), []byte("a2"), 0o644); err != nil {
			t.Fatal(err)
		}
		c.Get(path("b")) // a is now the least recently used of a, b, c
		eventually(t, "a rebuilt with its new text", func() bool {
			v, err := c.Get(path("a"))
			return err == nil && v == "a2"
		})
		os.WriteFile(path("a"), []byte("a"), 0o644)
	})
	t.Run("idle ttl", func(t *testing.T) {
		var builds atomic.Int64
		// Long enough that three gets on a starved CPU are not idle
		// between them; the sweep runs every half of it.
		c, err := interp.NewCache(readBuild(&builds), interp.CacheOptions{IdleTTL: 400 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, n := range []string{"a", "b", "c"} {
			if _, err := c.Get(path(n)); err != nil {
				t.Fatal(err)
			}
		}
		if c.Len() != 3 {
			t.Fatalf("held %d, want 3", c.Len())
		}
		eventually(t, "idle files dropped in the background", func() bool { return c.Len() == 0 })
		if v, err := c.Get(path("a")); err != nil || v != "a" || builds.Load() != 4 {
			t.Fatalf("after the sweep: %q %v, %d builds", v, err, builds.Load())
		}
	})
}
