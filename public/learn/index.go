//go:build ignore

package main

import (
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/sample/store"
)

// index serves /learn/: the log-in and registration forms of the notes
// application. They post to /api/learn/login and /api/learn/register and
// work without JavaScript.
var index = func(api *host.API, s *store.Store) any {
	data := map[string]any{"Title": "Log in", "User": ""}
	if u := s.CurrentUser(api.G()); u != nil {
		data["User"] = u.Username
	}
	return api.App().Render("learn/index", data)
}
