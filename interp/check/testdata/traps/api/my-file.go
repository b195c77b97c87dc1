//go:build ignore

// my-file is no Go identifier, so no var can be named after the file.
package main

import "github.com/zealgo/zealgo/host"

var myFile = func(api *host.API) any {
	return "never served"
}
