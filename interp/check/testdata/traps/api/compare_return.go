//go:build ignore

// A comparison returned through an any result is parenthesized (Yaegi panics with SetBool).
package main

import "github.com/zealgo/zealgo/host"

var compare_return = func(api *host.API) any {
	x := api.Method()
	return x != ""
}
