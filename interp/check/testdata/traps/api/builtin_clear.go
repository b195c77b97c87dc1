//go:build ignore

// The builtin clear (Go 1.21) is not supported.
package main

import "github.com/zealgo/zealgo/host"

var builtin_clear = func(api *host.API) any {
	m := map[string]int{"a": 1}
	clear(m)
	return m
}
