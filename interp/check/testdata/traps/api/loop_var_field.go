//go:build ignore

// The address of a loop variable's field, and a method value with a pointer receiver,
// outlive the iteration: the host copies the variable, as Go 1.22 gives each iteration its own.
package main

import "github.com/zealgo/zealgo/host"

type point struct{ X, Y int }

func (p *point) Move() int { p.X += 10; return p.X }

var loop_var_field = func(api *host.API) any {
	var xs []*int
	for _, p := range []point{{1, 1}, {2, 2}} {
		xs = append(xs, &p.X)
	}
	var moves []func() int
	for _, p := range []point{{1, 1}, {2, 2}} {
		moves = append(moves, p.Move)
	}
	return []int{*xs[0], *xs[1], moves[0](), moves[1]()}
}
