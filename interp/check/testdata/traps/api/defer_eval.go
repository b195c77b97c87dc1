//go:build ignore

// The interpreter evaluates a deferred call's arguments when the call runs:
// built, this answers {"after":[3,1],"args":[2,1,0],"captured":[2,1,0],"closure":[2,1,0]}.
package main

import "github.com/zealgo/zealgo/host"

func record(to *[]int, n int) { *to = append(*to, n) }

var defer_eval = func(api *host.API) any {
	var captured, args, closure, after []int
	func() {
		for i := 0; i < 3; i++ {
			defer func() { captured = append(captured, i) }()
		}
	}()
	func() {
		for i := 0; i < 3; i++ {
			defer record(&args, i)
		}
	}()
	func() {
		for i := 0; i < 3; i++ {
			f := func() { record(&closure, i) } // alike in both modes
			defer f()
		}
	}()
	func() {
		x := 1
		defer record(&after, x)
		x = 3
		defer record(&after, x)
	}()
	return map[string]any{"captured": captured, "args": args, "closure": closure, "after": after}
}
