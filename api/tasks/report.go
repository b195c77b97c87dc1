//go:build ignore

package main

import (
	"errors"

	"github.com/zealgo/zealgo/host"
)

// post serves POST /api/tasks/report with {"title": "...", "values": [1, 2, 3]}:
// it hands the work to task/report.go in a task worker and answers 202 with
// the task id at once. The report reaches the server's OnTaskFinish callback.
var post = func(api *host.API) (any, error) {
	title := api.String("title")
	values, ok := api.Input["values"].([]any)
	if title == "" || !ok || len(values) == 0 {
		api.Response(map[string]any{"error": "invalid_request",
			"hint": `send JSON {"title": "...", "values": [numbers]}`}, 400)
		return nil, nil
	}
	id, err := api.App().Server().Task(host.Task{Handler: "/task/report", Args: []any{title, values}})
	if errors.Is(err, host.ErrNoTaskWorkers) {
		api.Response(map[string]any{"error": "no_task_workers",
			"hint": "this server runs no task workers: start it with --task-workers 1 or more"}, 503)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	api.Response(map[string]any{"task_id": id, "task": "/task/report"}, 202)
	return nil, nil
}
