//go:build ignore

// range over an int (Go 1.22) is not supported.
package main

import "github.com/zealgo/zealgo/host"

var range_int = func(api *host.API) any {
	n, sum := 3, 0
	for i := range n {
		sum += i
	}
	return sum
}
