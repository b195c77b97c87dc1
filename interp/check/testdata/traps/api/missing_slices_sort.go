//go:build ignore

// slices.Sort is not in the interpreter's standard library.
package main

import (
	"slices"

	"github.com/zealgo/zealgo/host"
)

var missing_slices_sort = func(api *host.API) any {
	s := []int{3, 1, 2}
	slices.Sort(s)
	return s
}
