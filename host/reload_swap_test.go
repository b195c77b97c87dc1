package host_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// swapHandler is one file of the swapped directory: its name and the
// version of the tree it belongs to.
const swapHandler = `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var get = func(api *host.API) any { return map[string]any{"file": %q, "v": %d} }
`

// swapFiles are the files of api/swap/, one of them a level deeper.
var swapFiles = []string{"a.go", "b.go", "deep/c.go"}

// writeSwapTree writes version v of the tree into dir the way a checkout
// may: each file in two writes, so that a reader can catch one half
// written.
func writeSwapTree(t *testing.T, dir string, v int) {
	t.Helper()
	for _, name := range swapFiles {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		src := fmt.Sprintf(swapHandler, name, v)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		half := len(src) / 2
		_, err1 := f.WriteString(src[:half])
		_, err2 := f.WriteString(src[half:])
		if err := f.Close(); err != nil || err1 != nil || err2 != nil {
			t.Fatal(err, err1, err2)
		}
	}
}

// swapTree puts version v of the tree in dir as a checkout does, in one
// of three ways by v: rm -rf and the new tree written in its place; the
// new tree written beside and renamed into place; each file removed and
// written again (git checkout's way).
func swapTree(t *testing.T, dir string, v int) {
	t.Helper()
	switch v % 3 {
	case 0:
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		writeSwapTree(t, dir, v)
	case 1:
		next, old := dir+".next", dir+".old"
		writeSwapTree(t, next, v)
		if err := os.Rename(dir, old); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(next, dir); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(old); err != nil {
			t.Fatal(err)
		}
	default:
		for _, name := range swapFiles {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		writeSwapTree(t, dir, v)
	}
}

// TestReloadDirectorySwaps: a checkout that deletes and recreates a
// directory under api/, renames a new one into its place, or removes and
// writes each file again, while four
// clients keep asking for its files: 10 swaps, and within 2 s of the last
// every file answers 200 with the version on disk. The watcher follows
// the directories that were replaced (issue 30, item 2).
func TestReloadDirectorySwaps(t *testing.T) {
	ta := newTestApp(t, map[string]string{"api/keep.go": fmt.Sprintf(swapHandler, "keep.go", 0)})
	swap := filepath.Join(ta.root, "api", "swap")
	writeSwapTree(t, swap, 0)
	url := func(name string) string {
		return ta.srv.URL + "/api/swap/" + name[:len(name)-len(".go")]
	}
	for _, name := range swapFiles {
		if code, body := get(t, url(name)); code != 200 {
			t.Fatalf("%s before the swaps: %d %s", name, code, body)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for n := i; !stop.Load(); n++ {
				resp, err := http.Get(url(swapFiles[n%len(swapFiles)]))
				if err == nil {
					resp.Body.Close()
				}
			}
		})
	}
	const swaps = 10
	for v := 1; v <= swaps; v++ {
		swapTree(t, swap, v)
	}
	last := time.Now()
	defer func() { stop.Store(true); wg.Wait() }()
	for _, name := range swapFiles {
		want := fmt.Sprintf(`{"file":%q,"v":%d}`, name, swaps)
		var code int
		var body string
		if !testutil.Poll(2*time.Second-time.Since(last), func() bool { code, body = get(t, url(name)); return code == 200 && body == want }) {
			t.Fatalf("%s 2 s after the last swap: %d %s, want 200 %s\n%s", name, code, body, want, ta.logs.String())
		}
	}
	t.Logf("every file at version %d %v after the last swap", swaps, time.Since(last))
}
