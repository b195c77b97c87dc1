//go:build ignore

package main

import (
	"net/http"

	"github.com/zealgo/zealgo/host"
)

// get and post serve /api/users (mode 2): other methods get 405.
var get = func(api *host.API) any {
	return map[string]any{"users": []map[string]any{{"id": 1, "name": "ada"}, {"id": 2, "name": "linus"}}}
}

var post = func(api *host.API) any {
	api.Res.WriteHeader(http.StatusCreated)
	return map[string]any{"created": true, "id": 3}
}
