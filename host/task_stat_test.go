package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestStatCacheRemembersPresentFilesOnly: a task file found present is
// not stat'ed again at each dispatch, while a missing one is checked each
// time, so that a file just added is seen at once.
func TestStatCacheRemembersPresentFilesOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "echo.go")
	calls := 0
	c := newStatCache(func(p string) error {
		calls++
		_, err := os.Stat(p)
		return err
	})
	if err := c.check(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(path, []byte("package task\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if err := c.check(path); err != nil {
			t.Fatalf("file just added: %v", err)
		}
	}
	if calls != 2 {
		t.Errorf("%d stats for 101 checks, want 2 (the miss, then the file once)", calls)
	}
}
