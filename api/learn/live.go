//go:build ignore

package main

import (
	"net/http"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/lib/learn"
	"github.com/zealgo/zealgo/sample/store"
)

// /api/learn/live: a WebSocket on which the logged-in account's notes
// pages hear that its notes changed (a message "changed", sent by
// /api/learn/notes through learn.NotesChanged), in this instance or
// another one on the same NATS. public/learn/live.js opens it.
//
// Not logged in: 401 {"error":"auth_required"}, before any upgrade.
var live = func(api *host.API, s *store.Store) any {
	u := s.CurrentUser(api.G())
	if u == nil {
		return host.NewError(http.StatusUnauthorized, "auth_required", "log in first: POST /api/learn/login")
	}
	return api.WebSocket(func(ws *host.WebSocket) error {
		ws.Join(learn.NotesRoom(u.ID))
		for { // the page sends nothing; reading notices its close
			if _, err := ws.Read(); err != nil {
				return nil
			}
		}
	})
}
