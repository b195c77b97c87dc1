//go:build ignore

package main

import (
	"github.com/zealgo/zealgo/bench/benchlib"
	"github.com/zealgo/zealgo/host"
)

// task dispatches one task and waits for its result: a request is one
// round trip to a task worker process and back.
var task = func(api *host.API, tasks *benchlib.Tasks) any {
	id, err := api.App().Server().Task(host.Task{Handler: "/task/echo", Args: []any{1}})
	if err != nil {
		api.Response(map[string]any{"error": err.Error()}, 503)
		return nil
	}
	v, ok := tasks.Wait(id, 10000)
	if !ok {
		api.Response(map[string]any{"error": "timeout"}, 504)
		return nil
	}
	return map[string]any{"id": id, "result": v}
}
