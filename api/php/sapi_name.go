//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

// sapi_name serves /api/php/sapi_name for every method.
var sapi_name = func(api *host.API) any {
	return map[string]any{"sapi": "zealgo", "async": true}
}
