//go:build ignore

// Comparisons and negations in a (any, error) result.
package main

import "github.com/zealgo/zealgo/host"

func isGet(m string) any { return m == "GET" }

var compare_return_multi = func(api *host.API) (any, error) {
	ok := api.Method() == "POST"
	return map[string]any{"not_post": !ok, "get": isGet(api.Method())}, nil
}
