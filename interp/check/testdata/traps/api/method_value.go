//go:build ignore

// The interpreter binds a method value's receiver when it is called, not where it is
// written: built, this answers {"closure":[11,12],"later":1,"loop":[11,12]}.
package main

import "github.com/zealgo/zealgo/host"

type point struct{ X, Y int }

func (p *point) Move() int { p.X += 10; return p.X }

func (p point) Get() int { return p.X }

var method_value = func(api *host.API) any {
	var loop, closure []func() int
	for _, p := range []point{{1, 1}, {2, 2}} {
		loop = append(loop, p.Move)
	}
	for _, p := range []point{{1, 1}, {2, 2}} {
		closure = append(closure, func() int { return p.Move() }) // alike in both modes
	}
	p := point{1, 1}
	get := p.Get
	p = point{5, 5}
	return map[string]any{"loop": []int{loop[0](), loop[1]()}, "closure": []int{closure[0](), closure[1]()}, "later": get()}
}
