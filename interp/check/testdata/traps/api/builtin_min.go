//go:build ignore

// The builtins min and max (Go 1.21) are not supported.
package main

import "github.com/zealgo/zealgo/host"

var builtin_min = func(api *host.API) any {
	a, b := 3, 5
	return map[string]any{"min": min(a, b)}
}
