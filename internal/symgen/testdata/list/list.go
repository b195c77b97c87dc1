// Package list has the name of a standard package.
package list

import "container/list"

// T is a type.
type T int

// Lister uses container/list.
type Lister interface {
	Push(l *list.List, e *list.Element)
	Own(t T) T
}
