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
	"net/http"

	"github.com/zealgo/zealgo/host"
)

// Form is the form a failed log-in or registration goes back to, as the
// page template/learn/failed.html names it.
type Form struct {
	Title, Heading, Back, BackText string
}

// LogInForm and RegisterForm are the two forms of /learn/.
var (
	LogInForm    = Form{Title: "Log in", Heading: "Log-in failed", Back: "/learn/", BackText: "Back to the log-in form"}
	RegisterForm = Form{Title: "Register", Heading: "Registration failed", Back: "/learn/#register", BackText: "Back to the registration form"}
)

// LogIn logs the account id in: the session gets a new id (against
// fixation) and holds user_id. A browser (api.PrefersHTML) is redirected to the notes page;
// any other client is answered status with {"user_id","username"}.
func LogIn(api *host.API, id int64, username string, status int) any {
	g := api.G()
	if err := g.Session.Rotate(); err != nil {
		return err // 500 internal_error; the log has the details
	}
	g.Session.Set("user_id", id)
	if api.PrefersHTML() {
		return SeeOther(api, "/learn/notes")
	}
	api.Res.WriteHeader(status)
	return map[string]any{"user_id": id, "username": username}
}

// AuthFailed answers a failed log-in or registration: JSON
// {"error","hint"} for a client that does not prefer HTML, else template/learn/failed.html with
// an auth-error paragraph and a link back to form.
func AuthFailed(api *host.API, form Form, status int, code, message string) any {
	if !api.PrefersHTML() {
		return host.NewError(status, code, message)
	}
	api.Res.WriteHeader(status)
	return api.App().Render("learn/failed", map[string]any{"Title": form.Title, "Heading": form.Heading,
		"Message": message, "Back": form.Back, "BackText": form.BackText})
}

// SeeOther redirects to loc with 303 See Other: the answer to a form
// posted by a browser.
func SeeOther(api *host.API, loc string) int {
	api.Res.Header().Set("Location", loc)
	return http.StatusSeeOther
}
