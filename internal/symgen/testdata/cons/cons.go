// Package cons has constraint interfaces.
package cons

import "io"

// Num is a type set.
type Num interface{ ~int | ~float64 }

// Cmp is comparable.
type Cmp interface{ comparable }

// Exact is a single type.
type Exact interface{ int }

// NumM embeds Num and has a method.
type NumM interface {
	Num
	M()
}

// JustNum embeds Num.
type JustNum interface{ Num }

// Fn is a generic func type.
type Fn[T any] func(T)

// Inst is an instance alias.
type Inst = Fn[int]

// Named is a defined type of an instance.
type Named Fn[string]

// V is an instance var.
var V Fn[int]

// AnyE embeds any.
type AnyE interface{ any }

// RdE embeds io.Reader only.
type RdE interface{ io.Reader }

// AnyU is a union with any.
type AnyU interface{ any | int }

// Key is an alias of an interface of another package.
type Key = io.Closer
