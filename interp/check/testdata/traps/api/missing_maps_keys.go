//go:build ignore

// maps.Keys is not in the interpreter's standard library.
package main

import (
	"maps"

	"github.com/zealgo/zealgo/host"
)

var missing_maps_keys = func(api *host.API) any {
	m := map[string]int{"a": 1}
	return maps.Keys(m)
}
