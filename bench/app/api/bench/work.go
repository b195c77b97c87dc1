//go:build ignore

package main

import (
	"strconv"

	"github.com/zealgo/zealgo/host"
)

// work builds 100 records in the interpreter; the JSON encoding is the
// framework's (the return contract).
var work = func(api *host.API) any {
	n := 100
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
	return map[string]any{"count": n, "records": recs}
}
