//go:build ignore

// A closure captures a loop variable that the body changes: the host cannot copy it.
package main

import "github.com/zealgo/zealgo/host"

var loop_var_assigned = func(api *host.API) any {
	var fs []func() int
	for i := 0; i < 6; i++ {
		fs = append(fs, func() int { return i })
		i++
	}
	out := []int{}
	for _, f := range fs {
		out = append(out, f())
	}
	return out
}
