//go:build ignore

// A type argument inferred through a generic type, and slices.Clone through a constraint.
package main

import (
	"slices"

	"github.com/zealgo/zealgo/host"
)

type box[T any] struct{ V T }

func unbox[T any](b *box[T]) T { return b.V }

var generic_box = func(api *host.API) any {
	return map[string]any{"v": unbox(&box[string]{"z"}), "clone": slices.Clone([]string{"a", "b"})}
}
