//go:build ignore

package main

import (
	"net/http"

	"github.com/zealgo/zealgo/host"
)

// get answers who is calling: the user the main's hooks recognise, or 401.
var get = func(api *host.API) any {
	name, ok := api.Username()
	if !api.IsAuthenticated() || !ok {
		return host.NewError(http.StatusUnauthorized, "auth_required", "Send the X-Token header.")
	}
	return map[string]any{"user": name}
}
