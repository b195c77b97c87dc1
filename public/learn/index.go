//go:build ignore

package main

import (
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/lib/learn"
	"github.com/zealgo/zealgo/sample/store"
)

// index serves /learn/: the log-in and registration forms of the notes
// application. They post to /api/learn/login and /api/learn/register and
// work without JavaScript; a failed one comes back as this page with the
// error beside the form (learn.AuthFailed). A visitor who is logged in
// already is sent on to the notes.
var index = func(api *host.API, s *store.Store) any {
	if s.CurrentUser(api.G()) != nil {
		return learn.SeeOther(api, "/learn/notes")
	}
	return api.App().Render("learn/index", learn.AuthPage(learn.LogInForm, "", "", ""))
}
