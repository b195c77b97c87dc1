// Package learn holds the code that the sample's handler files and pages
// (api/learn/, public/learn/) share. It is an ordinary package of this
// module, imported by path:
//
//	import "github.com/zealgo/zealgo/lib/learn"
//
// zealgo interprets it from source, as it does the handler files: nothing
// is compiled into the binary, and saving this file reloads every file that
// imports it. Each handler file gets its own copy of a package's variables,
// so a package keeps no state that handlers share: the accounts and notes
// live in the database, behind the *store.Store the sample provides.
package learn

import (
	"mime"
	"net/http"
	"strings"

	"github.com/zealgo/zealgo/host"
)

// Form is the form of /learn/ that a failed log-in or registration is
// shown again in (template/learn/index.html).
type Form struct {
	ID    string // "login" or "register"
	Title string // the page title
}

// LogInForm and RegisterForm are the two forms of /learn/.
var (
	LogInForm    = Form{ID: "login", Title: "Log in"}
	RegisterForm = Form{ID: "register", Title: "Register"}
)

// LogIn logs the account id in: the session gets a new id (against
// fixation) and holds user_id. A form (WantsPage) is redirected to the
// notes page; a JSON client is answered status with
// {"user_id","username"}.
func LogIn(api *host.API, id int64, username string, status int) any {
	g := api.G()
	if err := g.Session.Rotate(); err != nil {
		return err // 500 internal_error; the log has the details
	}
	g.Session.Set("user_id", id)
	if WantsPage(api) {
		return SeeOther(api, "/learn/notes")
	}
	api.Res.WriteHeader(status)
	return map[string]any{"user_id": id, "username": username}
}

// WantsPage reports whether a log-in or registration is answered as the
// spec answers a form: a redirect on success, else the /learn/ page with
// the status (409 or 401, text/html; charset=utf-8). A form POST is,
// whatever its Accept header (curl sends */*, a script none), unless the
// client asks for JSON (api.PrefersJSON: Accept: application/json); a
// JSON body keeps the negotiation of the other endpoints: a page only for
// a client that prefers HTML (api.PrefersHTML).
func WantsPage(api *host.API) bool {
	mt, _, _ := mime.ParseMediaType(api.Req.Parent.Header.Get("Content-Type"))
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return api.PrefersHTML()
	}
	return !api.PrefersJSON()
}

// AuthFailed answers a failed log-in or registration: JSON
// {"error","hint"} for a JSON client (WantsPage), else the /learn/ page
// again (template/learn/index.html) with status, the message
// beside form and the username as typed in it, so that only what was
// wrong is typed again.
func AuthFailed(api *host.API, form Form, status int, code, message string) any {
	if !WantsPage(api) {
		return host.NewError(status, code, message)
	}
	api.Res.WriteHeader(status)
	username := api.Req.Field("username")
	return api.App().Render("learn/index", AuthPage(form, message, username, focusField(form, code, username)))
}

// SeeOther redirects to loc with 303 See Other: the answer to a form
// posted by a browser.
func SeeOther(api *host.API, loc string) int {
	api.Res.Header().Set("Location", loc)
	return http.StatusSeeOther
}

// Guard is the throttle of one form ("login", "register") for one
// attempt: attempts count per client address, tried first, and per
// username (App.Throttle, 5 a minute by default) from the moment they
// begin, before the password is checked, so that attempts under way
// count; past the limit every attempt gets 429 with Retry-After, the
// right password too. A successful attempt is uncounted.
type Guard struct {
	throttle *host.Throttle
	attempt  *host.Attempt
	keys     []string // the address's and the lower-cased username's
}

// Throttle begins the attempt to post form as name and returns its Guard,
// or the 429 answer when the attempt is refused (else nil).
func Throttle(api *host.API, name string, form Form, username string) (*Guard, any) {
	g := &Guard{throttle: api.App().Throttle(name),
		keys: []string{"addr:" + api.ClientIP(), "user:" + strings.ToLower(username)}}
	at, e := g.throttle.Begin(g.keys...)
	if e != nil {
		api.Res.Header().Set("Retry-After", e.Header.Get("Retry-After"))
		return g, AuthFailed(api, form, e.Status, e.Code, e.Hint)
	}
	g.attempt = at
	return g, nil
}

// Succeed uncounts the attempt and forgets the username's failures; the
// address keeps its own. An attempt that does not succeed stays counted.
func (g *Guard) Succeed() {
	g.attempt.Succeed()
	g.throttle.Reset(g.keys[1])
}
