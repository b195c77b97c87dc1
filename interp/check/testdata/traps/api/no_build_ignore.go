// A handler file without //go:build ignore breaks go build ./...: a warning.
package main

import "github.com/zealgo/zealgo/host"

var no_build_ignore = func(api *host.API) any {
	return "served"
}
