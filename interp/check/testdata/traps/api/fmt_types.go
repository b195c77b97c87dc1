//go:build ignore

// fmt sees the interpreter's run-time type of a file's struct, without its name:
// built, this prints "main.item main.item{Name:\"a\", note:\"b\"} {Name:a note:b}".
package main

import (
	"fmt"

	"github.com/zealgo/zealgo/host"
)

type item struct {
	Name string
	note string
}

var fmt_types = func(api *host.API) any {
	it := item{"a", "b"}
	return fmt.Sprintf("%T %#v %+v", it, it, it)
}
