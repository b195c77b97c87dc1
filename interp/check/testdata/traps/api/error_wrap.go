//go:build ignore

// %w of an error type of the file wraps it (not %!w), and errors.Unwrap finds it.
package main

import (
	"errors"
	"fmt"

	"github.com/zealgo/zealgo/host"
)

type notFound struct{ id int }

func (e *notFound) Error() string { return fmt.Sprint("note ", e.id, " not found") }

var error_wrap = func(api *host.API) any {
	err := fmt.Errorf("load: %w", &notFound{7})
	return map[string]any{"msg": err.Error(), "unwrapped": errors.Unwrap(err) != nil}
}
