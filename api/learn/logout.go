//go:build ignore

package main

import (
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/lib/learn"
)

// post serves POST /api/learn/logout (mode 2: other methods get 405, so
// that a link on another site cannot log a user out; a cross-site POST is
// refused by the cross-origin protection): it removes user_id from the
// session, gives the session a new id and redirects to the log-in page (a
// browser: api.PrefersHTML); any other client gets {"logged_out":true}
// instead.
var post = func(api *host.API) any {
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
