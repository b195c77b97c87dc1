//go:build ignore

// A type assertion to an interface never matches a value of the file's
// types under the interpreter (false, or a panic).
package main

import "github.com/zealgo/zealgo/host"

type user struct{ Name string }

func (u user) Hello() string { return "hello " + u.Name }

type greeter interface{ Hello() string }

var assert_interface = func(api *host.API) any {
	var v any = user{"ada"}
	if g, ok := v.(greeter); ok {
		return g.Hello()
	}
	return "no greeter"
}
