//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

// list serves /api/device/list for every method (mode 1) and branches on
// the method itself.
var list = func(api *host.API) any {
	if api.Method() == "POST" {
		return map[string]any{"created": true, "method": "POST", "body": api.Input}
	}
	return map[string]any{
		"devices": []map[string]any{{"id": 1, "name": "sensor"}, {"id": 2, "name": "relay"}},
		"method":  api.Method(),
	}
}
