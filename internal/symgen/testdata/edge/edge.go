// Package edge has unusual shapes.
package edge

import (
	"container/list"
	"math/rand"
	randv2 "math/rand/v2"

	l2 "github.com/zealgo/zealgo/internal/symgen/testdata/list"
)

// Conflict needs two packages named rand.
type Conflict interface {
	A(r rand.Source) randv2.Source
	B(x l2.T, y *list.List) error
}

// Stringers has String methods of other shapes.
type Stringers interface {
	String(x int) string
}

// StrInt has a String method returning int.
type StrInt interface {
	String() int
}

// Blank has blank parameters.
type Blank interface {
	F(_ int, _ string) (_ error)
	G(a int, _ string)
}

// Embedded struct type with generic field use.
type Embedded struct{ Conflict }

// EmptyIface is any.
type EmptyIface = any

// Func uses any and interface{}.
func Func(a any, b interface{}) {}

// Ival is a var of interface type.
var Ival Conflict

// Ptr is a typed nil constant-like var.
var Ptr *int
