//go:build ignore

// The mode 2 handler delete hides the builtin delete, which the file also calls.
package main

import "github.com/zealgo/zealgo/host"

var notes = map[string]string{"a": "x", "b": "y"}

var get = func(api *host.API) any { return notes }

var delete = func(api *host.API) any {
	delete(notes, api.Req.Get("id"))
	return notes
}
