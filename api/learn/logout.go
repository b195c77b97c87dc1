//go:build ignore

package main

import (
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/lib/learn"
)

// logout serves /api/learn/logout for every method (mode 1): it removes
// user_id from the session, gives the session a new id and redirects to
// the log-in page (a browser: api.PrefersHTML); any other client gets {"logged_out":true} instead.
var logout = func(api *host.API) any {
	g := api.G()
	g.Session.Delete("user_id")
	if err := g.Session.Rotate(); err != nil {
		return err
	}
	if api.PrefersHTML() {
		return learn.SeeOther(api, "/learn/")
	}
	return map[string]any{"logged_out": true}
}
