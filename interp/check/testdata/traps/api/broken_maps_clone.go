//go:build ignore

// maps.Clone is in Yaegi's generic source but panics when run.
package main

import (
	"maps"

	"github.com/zealgo/zealgo/host"
)

var broken_maps_clone = func(api *host.API) any {
	m := map[string]int{"a": 1}
	return maps.Clone(m)
}
