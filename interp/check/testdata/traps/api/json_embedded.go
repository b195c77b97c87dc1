//go:build ignore

// An embedded struct of the file is encoded as a field, not promoted: a warning.
package main

import "github.com/zealgo/zealgo/host"

type base struct{ ID int }

type user struct {
	base
	Name string
}

var json_embedded = func(api *host.API) any {
	return user{base{1}, "ada"}
}
