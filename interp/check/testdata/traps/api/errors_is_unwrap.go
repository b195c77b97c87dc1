//go:build ignore

// errors.Is and errors.Unwrap see the Unwrap method of a wrapper type of the file.
package main

import (
	"errors"

	"github.com/zealgo/zealgo/host"
)

var errBase = errors.New("base")

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "wrapped: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

var errors_is_unwrap = func(api *host.API) any {
	var err error = &wrapped{errBase}
	return map[string]any{"is": errors.Is(err, errBase), "unwrap": errors.Unwrap(err) == errBase}
}
