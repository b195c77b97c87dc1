package interp_test

import (
	"fmt"

	"github.com/zealgo/zealgo/interp"
)

// A file is compiled in an interpreter of its own; its top-level variables
// come back as values the host calls directly.
func ExampleCompileSource() {
	src := `package main

import "strings"

var shout = func(s string) string { return strings.ToUpper(s) + "!" }
`
	p, err := interp.CompileSource("shout.go", []byte(src), interp.Options{})
	if err != nil {
		panic(err)
	}
	v, _ := p.Var("shout")
	fmt.Println(v.Interface().(func(string) string)("hello"))
	// Output: HELLO!
}

// A file that does not compile is an *interp.Error with its position.
func ExampleError() {
	_, err := interp.CompileSource("api/x.go", []byte("package main\n\nvar x = func() any { return y }\n"), interp.Options{})
	fmt.Println(err)
	// Output: api/x.go:3:29: undefined: y
}
