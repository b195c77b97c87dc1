//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

// edit serves /api/bench/edit: the file the tier benchmark saves again and
// again (bench/cmd/tierload rewrites its version).
var edit = func(api *host.API) any {
	return map[string]any{"version": 0}
}
