// Package kinds has one exported name of each kind.
package kinds

import (
	"errors"
	"time"
)

// Untyped constants of every kind.
const (
	Int      = 42
	Neg      = -7
	Big      = 1 << 70
	Float    = 3.25
	Third    = 1.0 / 3
	Huge     = 1e300
	Tiny     = 1e-300
	Imag     = 2i
	Complex  = 1 + 2.5i
	Rune     = 'x'
	Str      = "a \"quoted\"\n\ttab"
	Bool     = true
	False    = false
	Hex      = 0xff
	Exact    = 0.1
	IntFloat = 2.0
)

// Typed constants.
const (
	TInt   int           = 3
	TU64   uint64        = 1<<64 - 1
	TDur   time.Duration = 5 * time.Second
	TStr   string        = "typed"
	TKind  Kind          = 2
	TFloat float32       = 1.5
)

// Kind is a named int.
type Kind int

// Enumerated kinds.
const (
	KA Kind = iota
	KB
)

// Variables.
var (
	ErrX          = errors.New("x")
	Count         int
	Fn            func(int) string
	unexportedVar = 1
	Pair, Other   = 1, "two"
)

// F is a function.
func F(a int, b ...string) (int, error) { return a + len(b) + unexportedVar, nil }

// G is generic.
func G[T any](v T) T { return v }

// S is a struct.
type S struct{ A int }

// M is a method.
func (S) M() {}

// Box is a generic type.
type Box[T any] struct{ V T }

// Num is a constraint.
type Num interface{ ~int | ~float64 }

// Alias is an alias.
type Alias = S

// AliasInt is an alias of a predeclared type.
type AliasInt = int

// Fun is a func type.
type Fun func(x int) error

// Ch is a chan type.
type Ch chan<- int

// Arr is an array type.
type Arr [3]byte

type hidden struct{}

// NewHidden returns an unexported type.
func NewHidden() *hidden { return nil }
