// Package generic has only generic names.
package generic

// G is generic.
func G[T any](v T) T { return v }

// B is a generic type.
type B[T any] struct{ V T }
