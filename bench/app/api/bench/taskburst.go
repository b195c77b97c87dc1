//go:build ignore

package main

import (
	"strconv"
	"time"

	"github.com/zealgo/zealgo/bench/benchlib"
	"github.com/zealgo/zealgo/host"
)

// taskburst dispatches n tasks at once (?n=, default 1000), waits for all
// and reports the throughput.
var taskburst = func(api *host.API, tasks *benchlib.Tasks) any {
	n := 1000
	if s, ok := api.Input["n"].(string); ok {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			n = v
		}
	}
	t0 := time.Now()
	ids := make([]int64, 0, n)
	for i := 0; i < n; i++ {
		id, err := api.App().Server().Task(host.Task{Handler: "/task/echo", Args: []any{i}})
		if err != nil {
			api.Response(map[string]any{"error": err.Error()}, 503)
			return nil
		}
		ids = append(ids, id)
	}
	dispatched := time.Since(t0)
	for _, id := range ids {
		if _, ok := tasks.Wait(id, 30000); !ok {
			api.Response(map[string]any{"error": "timeout"}, 504)
			return nil
		}
	}
	el := time.Since(t0)
	return map[string]any{"tasks": n, "dispatch_ms": float64(dispatched.Microseconds()) / 1000,
		"total_ms": float64(el.Microseconds()) / 1000, "per_second": float64(n) / el.Seconds()}
}
