//go:build ignore

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/lib/learn"
	"github.com/zealgo/zealgo/sample/store"
)

// /api/learn/notes: the logged-in account's notes (mode 2). Each change
// is announced to the account's open notes pages (api/learn/live.go).
//
//	GET                 200 [note, ...]   (?id=N: 200 note)
//	POST title, body    201 note
//	PUT id, title, body 200 note
//	DELETE id           200 {"deleted":true,"id":N}
//
// PUT and DELETE take the id from the query (?id=N) or, when the query
// has none, from the body (a form field or a JSON member).
//
// Not logged in: 401 {"error":"auth_required"}. Another account's note, or
// none: 404 {"error":"note_not_found"}. A broken rule (title 1–200
// characters, body at most 10,000): 422.
//
// The notes page posts HTML forms here: a browser's POST may carry
// _method=PUT or _method=DELETE, and is answered with a redirect back to
// the page (with ?error=<code> when it failed) instead of JSON. A browser
// is a client whose Accept header prefers HTML (api.PrefersHTML); every
// other client, one that sends no Accept header or */* included, gets JSON.

var get = func(api *host.API, s *store.Store) any {
	u := s.CurrentUser(api.G())
	if u == nil {
		return failure(api, authRequired())
	}
	if _, ok := api.Input["id"]; ok {
		id, e := parseNoteID(api)
		if e != nil {
			return e
		}
		n, err := s.Note(api.Context(), u.ID, id)
		if err != nil {
			return failure(api, noteError(err))
		}
		return n
	}
	notes, err := s.Notes(api.Context(), u.ID)
	if err != nil {
		return err
	}
	return notes
}

var post = func(api *host.API, s *store.Store) any {
	switch strings.ToUpper(api.String("_method")) {
	case "PUT", "PATCH":
		return update(api, s)
	case "DELETE":
		return remove(api, s)
	}
	u := s.CurrentUser(api.G())
	if u == nil {
		return failure(api, authRequired())
	}
	title, body := api.Req.Field("title"), api.Req.Field("body")
	if v := store.ValidateNote(title, body); v != nil {
		return failure(api, host.NewError(http.StatusUnprocessableEntity, v.Code, v.Message))
	}
	n, err := s.CreateNote(api.Context(), u.ID, title, body)
	if err != nil {
		return failure(api, noteError(err))
	}
	learn.NotesChanged(api, u.ID)
	if api.PrefersHTML() {
		return backToPage(api, "")
	}
	api.Res.WriteHeader(http.StatusCreated)
	return n
}

var put = func(api *host.API, s *store.Store) any { return update(api, s) }

var delete = func(api *host.API, s *store.Store) any { return remove(api, s) }

// update replaces the title and body of the note id (parseNoteID).
func update(api *host.API, s *store.Store) any {
	uid, id, fail := owned(api, s)
	if fail != nil {
		return fail
	}
	title, body := api.Req.Field("title"), api.Req.Field("body")
	if v := store.ValidateNote(title, body); v != nil {
		return failure(api, host.NewError(http.StatusUnprocessableEntity, v.Code, v.Message))
	}
	n, err := s.UpdateNote(api.Context(), uid, id, title, body)
	if err != nil {
		return failure(api, noteError(err))
	}
	learn.NotesChanged(api, uid)
	if api.PrefersHTML() {
		return backToPage(api, "")
	}
	return n
}

// remove deletes the note id (parseNoteID).
func remove(api *host.API, s *store.Store) any {
	uid, id, fail := owned(api, s)
	if fail != nil {
		return fail
	}
	if err := s.DeleteNote(api.Context(), uid, id); err != nil {
		return failure(api, noteError(err))
	}
	learn.NotesChanged(api, uid)
	if api.PrefersHTML() {
		return backToPage(api, "")
	}
	return map[string]any{"deleted": true, "id": id}
}

// owned returns the caller's account id and the note id, or what
// to answer when there is no caller or no valid id.
func owned(api *host.API, s *store.Store) (userID, noteID int64, fail any) {
	u := s.CurrentUser(api.G())
	if u == nil {
		return 0, 0, failure(api, authRequired())
	}
	id, e := parseNoteID(api)
	if e != nil {
		return 0, 0, failure(api, e)
	}
	return u.ID, id, nil
}

// authRequired is the answer to a caller who is not logged in.
func authRequired() error {
	return host.NewError(http.StatusUnauthorized, "auth_required", "log in first: POST /api/learn/login")
}

// parseNoteID reads the note id from the query (?id=N), else from the
// body: API.Input for POST and PUT, bodyID for DELETE.
func parseNoteID(api *host.API) (int64, *host.Error) {
	raw := api.Req.Get.Get("id")
	if raw == "" {
		raw = api.String("id")
	}
	if raw == "" {
		raw = bodyID(api)
	}
	id, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil || id <= 0 {
		return 0, host.NewError(http.StatusUnprocessableEntity, "invalid_id", "id must be the positive integer id of a note, as in ?id=12")
	}
	return id, nil
}

// bodyID returns the id field of a DELETE request's body, form-encoded
// or a JSON object, whose input holds the query only; "" when there is
// none.
func bodyID(api *host.API) string {
	r := api.Req.Parent
	if r.Method != http.MethodDelete || r.Body == nil {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxDeleteBody))
	if err != nil {
		return ""
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-www-form-urlencoded":
		v, err := url.ParseQuery(string(b))
		if err != nil {
			return ""
		}
		return v.Get("id")
	case "application/json":
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if d.Decode(&m) != nil {
			return ""
		}
		switch id := m["id"].(type) {
		case json.Number:
			return id.String()
		case string:
			return id
		}
	}
	return ""
}

// maxDeleteBody is as much of a DELETE body as bodyID reads.
const maxDeleteBody = 4096

// noteError maps a store error to its response: 404 note_not_found, or a
// 500 for anything else.
func noteError(err error) error {
	if errors.Is(err, store.ErrNoteNotFound) {
		return host.NewError(http.StatusNotFound, "note_not_found", "you have no note with that id")
	}
	return err
}

// failure sends e as JSON, or, to a browser posting the notes page's
// forms, redirects back to the page (the log-in page when logged out); a
// failure of the server is logged and shown on the page as such.
func failure(api *host.API, e error) any {
	if !api.PrefersHTML() {
		return e
	}
	var he *host.Error
	if !errors.As(e, &he) {
		api.App().Logger().Error("notes: request failed", "request_id", api.RequestID(), "err", e)
		return backToPage(api, "internal_error")
	}
	if he.Code == "auth_required" {
		return learn.SeeOther(api, "/learn/")
	}
	return backToPage(api, he.Code)
}

// backToPage redirects to the notes page, with ?error=code when not "".
func backToPage(api *host.API, code string) any {
	loc := "/learn/notes"
	if code != "" {
		loc += "?error=" + url.QueryEscape(code)
	}
	return learn.SeeOther(api, loc)
}
