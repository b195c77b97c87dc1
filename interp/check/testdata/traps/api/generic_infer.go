//go:build ignore

// A type argument only a func argument's result decides: the host writes the inferred type arguments out.
package main

import (
	"strconv"

	"github.com/zealgo/zealgo/host"
)

func mapf[T, U any](s []T, f func(T) U) []U {
	out := make([]U, 0, len(s))
	for _, x := range s {
		out = append(out, f(x))
	}
	return out
}

var generic_infer = func(api *host.API) any {
	return mapf([]int{1, 2}, strconv.Itoa)
}
