//go:build ignore

// sync.OnceValue is not in the interpreter's standard library.
package main

import (
	"sync"

	"github.com/zealgo/zealgo/host"
)

var config = sync.OnceValue(func() string { return "loaded" })

var missing_oncevalue = func(api *host.API) any {
	return config()
}
