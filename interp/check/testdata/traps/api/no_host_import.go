//go:build ignore

// The file forgets to import host: an undefined package name, with its position.
package main

var no_host_import = func(api *host.API) any {
	return "hello"
}
