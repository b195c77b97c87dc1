//go:build ignore

// The address of a loop variable's field outlives the iteration: the host copies the
// variable, as Go 1.22 gives each iteration its own (built, this answers [1,2] too).
package main

import "github.com/zealgo/zealgo/host"

type point struct{ X, Y int }

var loop_var_field = func(api *host.API) any {
	var xs []*int
	for _, p := range []point{{1, 1}, {2, 2}} {
		xs = append(xs, &p.X)
	}
	return []int{*xs[0], *xs[1]}
}
