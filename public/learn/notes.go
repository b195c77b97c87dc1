//go:build ignore

package main

import (
	"strconv"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/lib/learn"
	"github.com/zealgo/zealgo/sample/store"
)

// notes serves /learn/notes: the logged-in account's notes, with forms to
// add, edit (?edit=N) and delete them, posting to /api/learn/notes; no
// JavaScript needed. A visitor who is not logged in is sent to /learn/.
var notes = func(api *host.API, s *store.Store) any {
	u := s.CurrentUser(api.G())
	if u == nil {
		return learn.SeeOther(api, "/learn/")
	}
	list, err := s.Notes(api.Context(), u.ID)
	if err != nil {
		return err
	}
	edit, _ := strconv.ParseInt(api.String("edit"), 10, 64)
	items := []map[string]any{}
	for _, n := range list {
		items = append(items, map[string]any{
			"ID":      n.ID,
			"Title":   n.Title,
			"Body":    n.Body,
			"Updated": time.Unix(n.UpdatedAt, 0).UTC().Format("2006-01-02 15:04 UTC"),
			"Edit":    n.ID == edit,
		})
	}
	data := map[string]any{
		"Title":    "Your notes",
		"User":     u.Username,
		"Notes":    items,
		"Error":    errorMessages[api.String("error")],
		"TitleMax": store.TitleMax,
		"BodyMax":  store.BodyMax,
	}
	api.Res.Header().Set("Cache-Control", "no-store")
	return api.App().Render("learn/notes", data)
}

// errorMessages explain the error codes /api/learn/notes sends back in
// ?error=; an unknown code shows nothing.
var errorMessages = map[string]string{
	"invalid_title":  "A note needs a title of 1 to 200 characters.",
	"invalid_body":   "A note's text can be at most 10,000 characters.",
	"invalid_id":     "That note does not exist.",
	"note_not_found": "That note does not exist.",
	"internal_error": "Something went wrong on our side; please try again.",
}
