//go:build ignore

// atomic.Pointer is not in the interpreter's standard library.
package main

import (
	"sync/atomic"

	"github.com/zealgo/zealgo/host"
)

var current atomic.Pointer[string]

var missing_atomic_pointer = func(api *host.API) any {
	return current.Load()
}
