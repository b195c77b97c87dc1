//go:build ignore

package main

import (
	"net/url"

	"github.com/zealgo/zealgo/host"
)

// hello greets ?name= (default "world") and links the documentation whose
// address the application's main provides.
var hello = func(api *host.API, docs *url.URL) any {
	name := api.String("name")
	if name == "" {
		name = "world"
	}
	return map[string]any{"hello": name, "docs": docs.String()}
}
