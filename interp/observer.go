package interp

import (
	"errors"
	"io/fs"
	"time"
)

// Observer is told what a Cache does, for metrics: interp stays free of
// any metrics library, and the host counts what it is told. Its methods
// are called from the goroutine that builds, so they must be quick and
// safe for concurrent use.
type Observer interface {
	// Built reports one build of the file at path: reload is false for
	// the first build (by Get) and true for a build after a change on
	// disk; d is how long it took and err its error (nil when it
	// compiled). A file found missing is no build and is not reported.
	Built(path string, reload bool, d time.Duration, err error)
}

// timedBuild builds path and reports the build to the observer.
func (c *Cache[T]) timedBuild(path string, reload bool) (T, error) {
	o := c.opts.Observer
	if o == nil {
		return c.build(path)
	}
	start := time.Now()
	v, err := c.build(path)
	if !errors.Is(err, fs.ErrNotExist) {
		o.Built(path, reload, time.Since(start), err)
	}
	return v, err
}
