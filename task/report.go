//go:build ignore

package main

import (
	"context"
	"errors"
	"os"
)

// report summarises a series of numbers in the background. It runs in a
// task worker process, dispatched by api/tasks/report.go; its result
// reaches the server's OnTaskFinish callback (logged by default).
//
// Its arguments arrive as JSON and are converted to its parameter types
// (the context is injected, not an argument); its result goes back as
// JSON, so it returns a map.
var report = func(ctx context.Context, title string, values []float64) (map[string]any, error) {
	if len(values) == 0 {
		return nil, errors.New("report: no values")
	}
	sum, lo, hi := 0.0, values[0], values[0]
	for i, v := range values {
		if i%100000 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		sum += v
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return map[string]any{
		"title":  title,
		"count":  len(values),
		"sum":    sum,
		"mean":   sum / float64(len(values)),
		"min":    lo,
		"max":    hi,
		"worker": os.Getpid(),
	}, nil
}
