//go:build ignore

package main

import (
	"errors"
	"net/http"
	"strings"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/sample/store"
)

// post serves POST /api/learn/login (mode 2: other methods get 405). It
// takes username and password as form fields or as a JSON object. On
// success it logs the account in with a fresh session id and redirects to
// the notes page (a browser: api.PrefersHTML); any other client gets
// {"user_id","username"} instead. A
// wrong username and a wrong password get the same 401, after the same
// work (a bcrypt verification either way). Failures are throttled per
// client address and per username (App.Throttle: 5 a minute by default),
// then every attempt gets 429 with Retry-After, the right password too.
var post = func(api *host.API, s *store.Store) any {
	username := api.Req.Field("username")
	password := api.Req.Field("password")
	throttle := api.App().Throttle("login")
	keys := []string{"addr:" + api.ClientIP(), "user:" + strings.ToLower(username)}
	if e := throttle.Check(keys...); e != nil {
		api.Res.Header().Set("Retry-After", e.Header.Get("Retry-After"))
		return authError(api, e.Status, e.Code, e.Hint)
	}
	id, err := s.CheckLogin(api.Context(), username, password)
	if errors.Is(err, store.ErrBadCredentials) { // also an empty username or password
		throttle.Fail(keys...)
		return authError(api, http.StatusUnauthorized, "invalid_credentials", "Wrong username or password.")
	}
	if err != nil {
		return err // 500 internal_error; the log has the details
	}
	throttle.Reset(keys[1]) // the username's failures; the address keeps its own
	g := api.G()
	if err := g.Session.Rotate(); err != nil { // a new session id, against fixation
		return err
	}
	g.Session.Set("user_id", id)
	if api.PrefersHTML() {
		api.Res.Header().Set("Location", "/learn/notes")
		return http.StatusSeeOther
	}
	return map[string]any{"user_id": id, "username": username}
}

// authError answers a failed login: for a browser, the page
// template/learn/failed.html with an auth-error paragraph; for any other
// client, JSON {"error","hint"}.
func authError(api *host.API, status int, code, message string) any {
	if !api.PrefersHTML() {
		return host.NewError(status, code, message)
	}
	api.Res.WriteHeader(status)
	return api.App().Render("learn/failed", map[string]any{"Title": "Log in", "Heading": "Log-in failed",
		"Message": message, "Back": "/learn/", "BackText": "Back to the log-in form"})
}
