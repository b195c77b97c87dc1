//go:build ignore

// range over a func (Go 1.23) is not supported.
package main

import "github.com/zealgo/zealgo/host"

func count(yield func(int) bool) {
	for i := 0; i < 3; i++ {
		if !yield(i) {
			return
		}
	}
}

var range_func = func(api *host.API) any {
	var out []int
	for i := range count {
		out = append(out, i)
	}
	return out
}
