// Package ifaces has interfaces of many shapes.
package ifaces

import (
	"container/list"
	"context"
	"io"
	"time"
)

// Reader has unnamed parameters and variadic ones.
type Reader interface {
	Read([]byte) (int, error)
	Log(format string, args ...any)
	Many(int, ...interface{})
	Nothing()
	Values(a, b int, c string) (x, y int)
	Ctx(context.Context) time.Duration
}

// Stringer has a String method.
type Stringer interface {
	String() string
}

// Both embeds other interfaces.
type Both interface {
	Stringer
	io.Closer
	Reader
	Extra(l *list.List) list.Element
}

// Empty has no methods.
type Empty interface{}

// Hidden has an unexported method.
type Hidden interface {
	Visible() int
	hidden()
}

// Generic is generic.
type Generic[T any] interface {
	Get() T
}

// Constraint is a type set.
type Constraint interface {
	~int | ~string
	String() string
}

// Funcs has func-typed parameters and composite types.
type Funcs interface {
	Call(f func(int) (string, error), m map[string][]*int, ch <-chan struct{}) [2]int
	Self(Funcs) Stringer
	Anon(struct{ A int }) interface{ M() }
	Ptr(p *Impl) **Impl
}

// Impl implements nothing in particular.
type Impl struct{}

// Err is an interface embedding error.
type Err interface {
	error
	Code() int
}

// Unexp uses an unexported type.
type Unexp interface {
	Get() impl
}

type impl struct{}
