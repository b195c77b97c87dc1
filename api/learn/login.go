//go:build ignore

package main

import (
	"errors"
	"net/http"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/lib/learn"
	"github.com/zealgo/zealgo/sample/store"
)

// post serves POST /api/learn/login (mode 2: other methods get 405). It
// takes username and password as form fields or as a JSON object. On
// success it logs the account in with a fresh session id and redirects to
// the notes page (a form: learn.WantsPage, whatever its Accept header);
// a JSON client gets {"user_id","username"} instead. A wrong username and
// a wrong password get the same 401, after the same work (a bcrypt verification either
// way). Attempts are throttled per client address, then per username
// (learn.Throttle), counted from their start, before bcrypt: past the
// limit every attempt gets 429 with Retry-After, the right password too;
// a successful one is uncounted. The helpers it shares with register.go live in
// lib/learn.
var post = func(api *host.API, s *store.Store) any {
	username := api.Req.Field("username")
	password := api.Req.Field("password")
	guard, refused := learn.Throttle(api, "login", learn.LogInForm, username)
	if refused != nil {
		return refused
	}
	id, err := s.CheckLogin(api.Context(), username, password)
	if errors.Is(err, store.ErrBadCredentials) { // also an empty username or password
		return learn.AuthFailed(api, learn.LogInForm, http.StatusUnauthorized, "invalid_credentials", "Wrong username or password.")
	}
	if err != nil {
		return err // 500 internal_error; the log has the details
	}
	guard.Succeed()
	return learn.LogIn(api, id, username, http.StatusOK)
}
