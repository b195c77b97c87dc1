//go:build ignore

// unsafe is not linked into the interpreter.
package main

import (
	"unsafe"

	"github.com/zealgo/zealgo/host"
)

var not_linked_unsafe = func(api *host.API) any {
	return unsafe.Sizeof(0)
}
