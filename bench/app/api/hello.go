//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

// hello answers a constant JSON object (scenario 0): the request path of
// the framework with as little handler work as there can be.
var hello = func(api *host.API) any {
	return map[string]any{"message": "hello"}
}
