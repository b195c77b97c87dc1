//go:build ignore

package main

import (
	"runtime"
	"runtime/debug"

	"github.com/zealgo/zealgo/host"
)

// mem collects garbage, returns freed memory to the system and reports
// the Go heap, for the tree-scale benchmark.
var mem = func(api *host.API) any {
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return map[string]any{"heap_inuse": m.HeapInuse, "heap_alloc": m.HeapAlloc, "sys": m.Sys, "num_gc": m.NumGC}
}
