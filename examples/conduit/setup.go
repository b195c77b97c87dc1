//go:build ignore

// setup configures Conduit at start-up, with no compiled main: one error
// format for the whole API. (A front end on another origin is allowed by
// serve's --allow-origin flag, or app.AllowOrigins here.)
package main

import (
	"net/http"
	"sort"

	"github.com/zealgo/zealgo/host"
)

var setup = func(app *host.App) error {
	// A func literal: an interpreted named func given as a value here
	// would not be called.
	app.ErrorFormatter(func(r *http.Request, e *host.Error) any { return realWorldError(e) })
	return nil
}

// realWorldError shapes every error the API answers (a handler's
// *host.Error, api.Bind's failing fields, the jwt alias's 401, an unknown
// URL's 404, a 405, a 413) as RealWorld's {"errors":{"body":[...]}}.
func realWorldError(e *host.Error) any {
	msgs := []string{}
	fields, _ := e.Fields["fields"].(map[string]any)
	for _, f := range fields {
		if m, ok := f.(map[string]any); ok {
			if s, ok := m["message"].(string); ok {
				msgs = append(msgs, s)
			}
		}
	}
	sort.Strings(msgs)
	if len(msgs) == 0 {
		msgs = append(msgs, e.Hint)
	}
	return map[string]any{"errors": map[string]any{"body": msgs}}
}
