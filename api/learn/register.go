//go:build ignore

package main

import (
	"errors"
	"net/http"
	"strings"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/sample/store"
)

// post serves POST /api/learn/register (mode 2: other methods get 405).
// It takes username and password as form fields or as a JSON object. On
// success it creates the account, logs it in with a fresh session id and
// redirects to a browser (api.PrefersHTML) the notes page; any other
// client gets 201 {"user_id", "username"} instead. A taken username is 409,
// a broken rule 422: an auth-error paragraph for a browser, {"error",
// "hint"} for any other client. Failures are throttled per client address
// and per username (App.Throttle), then every attempt gets 429 with
// Retry-After.
var post = func(api *host.API, s *store.Store) any {
	username := api.Req.Field("username")
	password := api.Req.Field("password")
	throttle := api.App().Throttle("register")
	keys := []string{"addr:" + api.ClientIP(), "user:" + strings.ToLower(username)}
	if e := throttle.Check(keys...); e != nil {
		api.Res.Header().Set("Retry-After", e.Header.Get("Retry-After"))
		return authError(api, e.Status, e.Code, e.Hint)
	}
	if v := store.ValidateCredentials(username, password); v != nil {
		throttle.Fail(keys...)
		return authError(api, http.StatusUnprocessableEntity, v.Code, v.Message)
	}
	id, err := s.CreateAccount(api.Context(), username, password)
	if errors.Is(err, store.ErrUsernameTaken) {
		throttle.Fail(keys...)
		return authError(api, http.StatusConflict, "username_taken", "That username is taken. Choose another one.")
	}
	if err != nil {
		return err // 500 internal_error; the log has the details
	}
	g := api.G()
	if err := g.Session.Rotate(); err != nil { // a new session id, against fixation
		return err
	}
	g.Session.Set("user_id", id)
	if api.PrefersHTML() {
		api.Res.Header().Set("Location", "/learn/notes")
		return http.StatusSeeOther
	}
	api.Res.WriteHeader(http.StatusCreated)
	return map[string]any{"user_id": id, "username": username}
}

// authError answers a failed registration: for a browser,
// template/learn/failed.html with an auth-error paragraph; for any other
// client, JSON {"error","hint"}.
func authError(api *host.API, status int, code, message string) any {
	if !api.PrefersHTML() {
		return host.NewError(status, code, message)
	}
	api.Res.WriteHeader(status)
	return api.App().Render("learn/failed", map[string]any{"Title": "Register", "Heading": "Registration failed",
		"Message": message, "Back": "/learn/#register", "BackText": "Back to the registration form"})
}
