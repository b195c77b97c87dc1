//go:build ignore

// errors.As cannot find an error type of the file held by value.
package main

import (
	"errors"
	"fmt"

	"github.com/zealgo/zealgo/host"
)

type notFound struct{ id int }

func (e notFound) Error() string { return fmt.Sprint("note ", e.id, " not found") }

var errors_as_value = func(api *host.API) any {
	err := fmt.Errorf("find: %w", notFound{7})
	var nf notFound
	return errors.As(err, &nf)
}
