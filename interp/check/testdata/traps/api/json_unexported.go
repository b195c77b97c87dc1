//go:build ignore

// Unexported fields of a struct of the file stay out of JSON (the host tags them json:"-").
package main

import "github.com/zealgo/zealgo/host"

type item struct {
	Name   string
	note   string
	secret string `json:"secret"`
}

var json_unexported = func(api *host.API) any {
	return []item{{Name: "a", note: "x", secret: "s"}}
}
