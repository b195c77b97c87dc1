//go:build ignore

// No warning: a closure called where it is written, and an address passed to a call,
// see the current iteration's variable in both modes, even when the body changes it.
package main

import "github.com/zealgo/zealgo/host"

func skip(p *int) { *p++ }

var loop_var_called = func(api *host.API) any {
	var seen []int
	for i := 0; i < 6; i++ {
		func() { seen = append(seen, i) }()
		skip(&i)
	}
	var sum int
	for _, n := range []int{1, 2, 3} {
		add := func() { sum += n }
		_ = add
		func() { sum += n * 10 }()
	}
	return map[string]any{"seen": seen, "sum": sum}
}
