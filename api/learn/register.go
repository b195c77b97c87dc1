//go:build ignore

package main

import (
	"errors"
	"net/http"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/lib/learn"
	"github.com/zealgo/zealgo/sample/store"
)

// post serves POST /api/learn/register (mode 2: other methods get 405).
// It takes username and password as form fields or as a JSON object. On
// success it creates the account, logs it in with a fresh session id and
// redirects a form (learn.WantsPage, whatever its Accept header) to the
// notes page; a JSON client gets 201 {"user_id", "username"} instead. A
// taken username is 409, a broken rule 422: the page with an auth-error
// paragraph for a form, {"error","hint"} for a JSON client. Attempts are
// throttled per client address, then per username (learn.Throttle),
// counted from their start: past the limit every attempt gets 429 with
// Retry-After; a successful one is uncounted.
var post = func(api *host.API, s *store.Store) any {
	username := api.Req.Field("username")
	password := api.Req.Field("password")
	guard, refused := learn.Throttle(api, "register", learn.RegisterForm, username)
	if refused != nil {
		return refused
	}
	if v := store.ValidateCredentials(username, password); v != nil {
		return learn.AuthFailed(api, learn.RegisterForm, http.StatusUnprocessableEntity, v.Code, v.Message)
	}
	id, err := s.CreateAccount(api.Context(), username, password)
	if errors.Is(err, store.ErrUsernameTaken) {
		return learn.AuthFailed(api, learn.RegisterForm, http.StatusConflict, "username_taken", "That username is taken. Choose another one.")
	}
	if err != nil {
		return err // 500 internal_error; the log has the details
	}
	guard.Succeed()
	return learn.LogIn(api, id, username, http.StatusCreated)
}
