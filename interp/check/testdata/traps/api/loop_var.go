//go:build ignore

// Closures capture a range variable: the host copies it per iteration, as Go 1.22 does.
package main

import "github.com/zealgo/zealgo/host"

var loop_var = func(api *host.API) any {
	var fs []func() string
	for _, name := range []string{"a", "b", "c"} {
		fs = append(fs, func() string { return name })
	}
	var ptrs []*int
	for i := 0; i < 3; i++ {
		ptrs = append(ptrs, &i)
	}
	out := []any{}
	for _, f := range fs {
		out = append(out, f())
	}
	for _, p := range ptrs {
		out = append(out, *p)
	}
	return out
}
