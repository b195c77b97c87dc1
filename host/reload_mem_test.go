package host_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// memHandler imports lib/table, a package whose copy in each compile of
// the file holds a megabyte, as an application's lookup table or cache
// does: an old compile kept alive shows.
const memHandler = `//go:build ignore

package main

import (
	"example.com/blog/lib/table"
	"github.com/zealgo/zealgo/host"
)

var version = func(api *host.API) any { return map[string]any{"v": %d, "n": table.Len()} }
`

// heapAfterGC returns the bytes of live heap objects after a collection.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC() // a second cycle frees what finalizers of the first let go
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestReloadMemoryFlat: 100 reloads of a handler that imports an
// application package, each version asked for once it serves: the live
// heap after reload 100 is within 40 MB of the heap after reload 20 (a
// compile holds its package's megabyte), so old compiles are let go.
// Before, a request to such a file kept its state, and through it the
// compiled file, reachable from the execution limit's timer for 30 s
// (issue 30, item 3).
func TestReloadMemoryFlat(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"go.mod":             "module example.com/blog\n\ngo 1.22\n",
		"lib/table/table.go": "package table\n\nvar data = make([]byte, 1<<20)\n\n// Len is the table's size.\nfunc Len() int { return len(data) }\n",
		"api/version.go":     fmt.Sprintf(memHandler, 0),
	})
	url := ta.srv.URL + "/api/version"
	path := filepath.Join(ta.root, "api/version.go")
	var at20 uint64
	for v := 1; v <= 100; v++ {
		if err := os.WriteFile(path, []byte(fmt.Sprintf(memHandler, v)), 0o644); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"n":1048576,"v":%d}`, v)
		testutil.WaitFor(t, 10*time.Second, "version "+want, func() bool { _, b := get(t, url); return b == want })
		if v == 20 {
			at20 = heapAfterGC()
		}
	}
	at100 := heapAfterGC()
	growth := int64(at100) - int64(at20)
	t.Logf("live heap after reload 20: %d MB, after reload 100: %d MB (growth %d KB)", at20>>20, at100>>20, growth>>10)
	if growth > 40<<20 {
		t.Fatalf("the live heap grew by %d MB between reload 20 and 100, want under 40 MB", growth>>20)
	}
}
