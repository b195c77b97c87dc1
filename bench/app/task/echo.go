//go:build ignore

package main

// echo returns its argument: the task of the dispatch benchmark.
var echo = func(n float64) map[string]any {
	return map[string]any{"n": n}
}
