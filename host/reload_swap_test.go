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

// TestReloadDirectorySwaps: a checkout that deletes and recreates a
// directory under api/, or renames a new one into its place, while four
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
		if v%2 == 1 { // rm -rf, then the new tree in its place
			if err := os.RemoveAll(swap); err != nil {
				t.Fatal(err)
			}
			writeSwapTree(t, swap, v)
			continue
		}
		// The new tree beside, then renamed into place.
		next, old := swap+".next", swap+".old"
		writeSwapTree(t, next, v)
		if err := os.Rename(swap, old); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(next, swap); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(old); err != nil {
			t.Fatal(err)
		}
	}
	last := time.Now()
	defer func() { stop.Store(true); wg.Wait() }()
	deadline := last.Add(2 * time.Second)
	for _, name := range swapFiles {
		want := fmt.Sprintf(`{"file":%q,"v":%d}`, name, swaps)
		for {
			code, body := get(t, url(name))
			if code == 200 && body == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s 2 s after the last swap: %d %s, want 200 %s\n%s", name, code, body, want, ta.logs.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Logf("every file at version %d %v after the last swap", swaps, time.Since(last))
}
