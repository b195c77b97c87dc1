// Package benchlib is the compiled side of the zealgo benchmarks: the work
// the benchmark handlers do, written in Go, used by the bare Echo reference
// and provided to interpreted handlers as a helper.
package benchlib

import (
	"net/url"
	"strconv"
)

// Records is the helper provided to interpreted handlers (app.Provide), so
// that a handler can move its loop into compiled code.
type Records struct{}

// Build returns n records, the same ones api/bench/work.go builds in the
// interpreter.
func (*Records) Build(n int) []map[string]any { return Build(n) }

// Build returns n records as maps: id, name, active, score and tags.
func Build(n int) []map[string]any {
	recs := make([]map[string]any, 0, n)
	for i := 0; i < n; i++ {
		recs = append(recs, map[string]any{
			"id":     i,
			"name":   "record " + strconv.Itoa(i),
			"active": i%2 == 0,
			"score":  float64(i) * 1.5,
			"tags":   []string{"alpha", "beta"},
		})
	}
	return recs
}

// QueryParams is the body of api/php/get.go, compiled: each query key with
// its value, or its values when there are several.
func QueryParams(q url.Values) map[string]any {
	params := map[string]any{}
	for k, v := range q {
		if len(v) == 1 {
			params[k] = v[0]
		} else {
			params[k] = v
		}
	}
	return map[string]any{"query_params": params, "async": true}
}
