//go:build ignore

// errors.As with a pointer error type of the file finds it through %w.
package main

import (
	"errors"
	"fmt"

	"github.com/zealgo/zealgo/host"
)

type notFound struct{ id int }

func (e *notFound) Error() string { return fmt.Sprint("note ", e.id, " not found") }

func find() error { return fmt.Errorf("find: %w", &notFound{7}) }

var errors_as = func(api *host.API) any {
	var nf *notFound
	if errors.As(find(), &nf) {
		return map[string]any{"found": true, "id": nf.id}
	}
	return map[string]any{"found": false}
}
