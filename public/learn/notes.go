//go:build ignore

package main

import (
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/sample/store"
)

// notes serves /learn/notes: the logged-in account's notes, with forms to
// add, edit (?edit=N) and delete them, posting to /api/learn/notes; no
// JavaScript needed. A visitor who is not logged in is sent to /learn/.
var notes = func(api *host.API, s *store.Store) any {
	u := s.CurrentUser(api.G())
	if u == nil {
		api.Res.Header().Set("Location", "/learn/")
		return http.StatusSeeOther
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
		"User":     u.Username,
		"Notes":    items,
		"Error":    errorMessages[api.String("error")],
		"TitleMax": store.TitleMax,
		"BodyMax":  store.BodyMax,
	}
	api.Res.Header().Set("Cache-Control", "no-store")
	var b strings.Builder
	if err := notesPage.Execute(&b, data); err != nil {
		return err
	}
	return b.String()
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

var notesPage = template.Must(template.New("notes").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Your notes · zealgo notes</title>
<link rel="stylesheet" href="/css/style.css">
<link rel="stylesheet" href="/css/learn.css">
</head>
<body class="learn">
<header class="learn-bar">
<a class="learn-brand" href="/learn/notes">zealgo notes</a>
<span class="learn-who">Logged in as <strong id="who">{{.User}}</strong></span>
<form id="logout" method="post" action="/api/learn/logout"><button type="submit" class="learn-link">Log out</button></form>
</header>
<main class="learn-notes">
{{if .Error}}<p class="note-error" role="alert">{{.Error}}</p>{{end}}
<section class="learn-card" aria-labelledby="add-title">
<h1 id="add-title">New note</h1>
<form id="add-note" class="learn-form" method="post" action="/api/learn/notes">
<label for="note-title">Title</label>
<input id="note-title" name="title" required maxlength="{{.TitleMax}}">
<label for="note-body">Text</label>
<textarea id="note-body" name="body" rows="4" maxlength="{{.BodyMax}}"></textarea>
<button type="submit">Add note</button>
</form>
</section>
<section aria-labelledby="list-title">
<h2 id="list-title">Your notes</h2>
{{if not .Notes}}<p class="learn-empty">No notes yet.</p>{{end}}
<ul class="note-list">
{{range .Notes}}<li class="note" id="note-{{.ID}}">
{{if .Edit}}<form class="learn-form note-edit" method="post" action="/api/learn/notes">
<input type="hidden" name="_method" value="PUT">
<input type="hidden" name="id" value="{{.ID}}">
<label for="edit-title-{{.ID}}">Title</label>
<input id="edit-title-{{.ID}}" name="title" value="{{.Title}}" required maxlength="{{$.TitleMax}}">
<label for="edit-body-{{.ID}}">Text</label>
<textarea id="edit-body-{{.ID}}" name="body" rows="4" maxlength="{{$.BodyMax}}">{{.Body}}</textarea>
<div class="note-actions"><button type="submit">Save</button> <a href="/learn/notes#note-{{.ID}}">Cancel</a></div>
</form>
{{else}}<h3 class="note-title">{{.Title}}</h3>
{{if .Body}}<p class="note-body">{{.Body}}</p>{{end}}
<div class="note-actions">
<time>{{.Updated}}</time>
<a href="/learn/notes?edit={{.ID}}#note-{{.ID}}">Edit</a>
<form method="post" action="/api/learn/notes"><input type="hidden" name="_method" value="DELETE"><input type="hidden" name="id" value="{{.ID}}"><button type="submit" class="learn-link">Delete</button></form>
</div>
{{end}}</li>
{{end}}</ul>
</section>
</main>
</body>
</html>
`))
