//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

// get serves /api/php/get for every method: a file named after a verb is
// always a mode 1 handler.
var get = func(api *host.API) any {
	params := map[string]any{}
	for k, v := range api.Req.Get {
		if len(v) == 1 {
			params[k] = v[0]
		} else {
			params[k] = v
		}
	}
	return map[string]any{"query_params": params, "async": true}
}
