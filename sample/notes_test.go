package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSampleNotesAPI covers every row of /api/learn/notes for a JSON
// client: list, create, read, update, delete, limits, and the errors.
func TestSampleNotesAPI(t *testing.T) {
	srv := newSampleServer(t)
	c := srv.client(t)
	uid := c.register("writer", "password1")

	created := c.addNote("first", "hello <b>world</b>")
	id := created["id"]
	if created["title"] != "first" || created["user_id"] != float64(uid) || created["created_at"] == nil || created["updated_at"] == nil {
		t.Fatalf("created %v", created)
	}

	tests := []struct {
		name   string
		method string
		path   string
		body   any // JSON body, or url.Values for a form without Accept: text/html
		status int
		check  func(t *testing.T, r reply)
	}{
		{"list", "GET", "/api/learn/notes", nil, 200, func(t *testing.T, r reply) {
			if !strings.HasPrefix(r.Body, "[") || !strings.Contains(r.Body, `"title":"first"`) {
				t.Errorf("list %s", r.Body)
			}
		}},
		{"read one", "GET", noteURL(id), nil, 200, func(t *testing.T, r reply) {
			if r.JSON(t)["title"] != "first" {
				t.Errorf("note %s", r.Body)
			}
		}},
		{"read missing", "GET", "/api/learn/notes?id=999999", nil, 404, wantError("note_not_found")},
		{"read bad id", "GET", "/api/learn/notes?id=abc", nil, 422, wantError("invalid_id")},
		{"create max title", "POST", "/api/learn/notes", map[string]any{"title": strings.Repeat("t", 200), "body": strings.Repeat("b", 10000)}, 201, nil},
		{"create by form", "POST", "/api/learn/notes", url.Values{"title": {"from curl"}, "body": {"x"}}, 201, func(t *testing.T, r reply) {
			if r.JSON(t)["title"] != "from curl" {
				t.Errorf("note %s", r.Body)
			}
		}},
		{"create empty title", "POST", "/api/learn/notes", map[string]any{"title": "", "body": "b"}, 422, wantError("invalid_title")},
		{"create whitespace title", "POST", "/api/learn/notes", map[string]any{"title": "   ", "body": "b"}, 422, wantError("invalid_title")},
		{"create long title", "POST", "/api/learn/notes", map[string]any{"title": strings.Repeat("t", 201)}, 422, wantError("invalid_title")},
		{"create long body", "POST", "/api/learn/notes", map[string]any{"title": "t", "body": strings.Repeat("b", 10001)}, 422, wantError("invalid_body")},
		{"update", "PUT", noteURL(id), map[string]any{"title": "renamed", "body": "new body"}, 200, func(t *testing.T, r reply) {
			m := r.JSON(t)
			if m["title"] != "renamed" || m["body"] != "new body" || m["id"] != id {
				t.Errorf("updated %s", r.Body)
			}
		}},
		{"update invalid", "PUT", noteURL(id), map[string]any{"title": ""}, 422, wantError("invalid_title")},
		{"update missing", "PUT", "/api/learn/notes?id=999999", map[string]any{"title": "x"}, 404, wantError("note_not_found")},
		{"update without id", "PUT", "/api/learn/notes", map[string]any{"title": "x"}, 422, wantError("invalid_id")},
		{"update negative id", "PUT", "/api/learn/notes?id=-1", map[string]any{"title": "x"}, 422, wantError("invalid_id")},
		{"patch is 405", "PATCH", noteURL(id), map[string]any{"title": "x"}, 405, func(t *testing.T, r reply) {
			if a := r.Header.Get("Allow"); a != "GET, HEAD, POST, PUT, DELETE, OPTIONS" {
				t.Errorf("Allow %q", a)
			}
		}},
		{"delete", "DELETE", noteURL(id), nil, 200, func(t *testing.T, r reply) {
			if r.Body != `{"deleted":true,"id":`+jsonNumber(id)+`}` {
				t.Errorf("body %s", r.Body)
			}
		}},
		{"delete again", "DELETE", noteURL(id), nil, 404, wantError("note_not_found")},
		{"read deleted", "GET", noteURL(id), nil, 404, wantError("note_not_found")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r reply
			if form, ok := tt.body.(url.Values); ok {
				r = c.do(tt.method, tt.path, strings.NewReader(form.Encode()), "Content-Type", "application/x-www-form-urlencoded")
			} else {
				r = c.json(tt.method, tt.path, tt.body)
			}
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); r.Status != 405 && ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func wantError(code string) func(t *testing.T, r reply) {
	return func(t *testing.T, r reply) {
		t.Helper()
		m := r.JSON(t)
		if m["error"] != code || m["hint"] == "" {
			t.Errorf("body %s, want error %q with a hint", r.Body, code)
		}
	}
}

// TestSampleNotesAuthRequired: every method of the notes API is 401
// auth_required without a logged-in account, also after logging out and
// when the account behind the session has been deleted.
func TestSampleNotesAuthRequired(t *testing.T) {
	srv := newSampleServer(t)
	deleted := srv.client(t)
	id := deleted.register("shortlived", "password1")
	if err := srv.Store.DB().Exec("DELETE FROM users WHERE id = ?", id).Error; err != nil {
		t.Fatal(err)
	}
	loggedOut := srv.client(t)
	loggedOut.register("leaver", "password1")
	if r := loggedOut.json("POST", "/api/learn/logout", nil); r.Status != 200 || r.Body != `{"logged_out":true}` {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}
	clients := map[string]*client{"anonymous": srv.client(t), "deleted account": deleted, "logged out": loggedOut}
	for who, c := range clients {
		for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
			t.Run(who+" "+m, func(t *testing.T) {
				r := c.json(m, "/api/learn/notes?id=1", map[string]any{"title": "x"})
				if r.Status != http.StatusUnauthorized {
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
				wantError("auth_required")(t, r)
			})
		}
	}
}

// TestSampleNotesIsolation: user A's note is invisible and untouchable
// for user B, through every method, and stays as A left it.
func TestSampleNotesIsolation(t *testing.T) {
	srv := newSampleServer(t)
	a, b := srv.client(t), srv.client(t)
	a.register("usera", "password-a")
	b.register("userb", "password-b")
	note := a.addNote("A's secret", "only for A")
	id := note["id"]

	if r := b.json("GET", "/api/learn/notes", nil); r.Status != 200 || r.Body != "[]" {
		t.Errorf("B lists %d %s", r.Status, r.Body)
	}
	attempts := []struct {
		name, method string
		body         any
	}{
		{"read", "GET", nil},
		{"update", "PUT", map[string]any{"title": "B was here", "body": "x"}},
		{"delete", "DELETE", nil},
	}
	for _, at := range attempts {
		t.Run(at.name, func(t *testing.T) {
			r := b.json(at.method, noteURL(id), at.body)
			if r.Status != http.StatusNotFound {
				t.Fatalf("B %s A's note: %d %s", at.name, r.Status, r.Body)
			}
			wantError("note_not_found")(t, r)
		})
	}
	// The form routes of the page are no way around it either.
	for _, m := range []string{"PUT", "DELETE"} {
		r := b.form("/api/learn/notes", url.Values{"_method": {m}, "id": {jsonNumber(id)}, "title": {"B"}})
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/learn/notes?error=note_not_found" {
			t.Errorf("B's form %s: %d Location %q", m, r.Status, r.Header.Get("Location"))
		}
	}
	r := a.json("GET", noteURL(id), nil)
	if r.Status != 200 {
		t.Fatalf("A reads: %d %s", r.Status, r.Body)
	}
	if m := r.JSON(t); m["title"] != "A's secret" || m["body"] != "only for A" {
		t.Errorf("A's note changed: %s", r.Body)
	}
}

// TestSampleNotesForms covers what the notes page posts: a browser's form
// posts (Accept: text/html) are redirected back to the page, with
// _method=PUT and _method=DELETE standing in for the methods forms lack.
func TestSampleNotesForms(t *testing.T) {
	srv := newSampleServer(t)
	c := srv.client(t)
	c.register("formuser", "password1")

	tests := []struct {
		name     string
		fields   url.Values
		location string
	}{
		{"add", url.Values{"title": {"by form"}, "body": {"text"}}, "/learn/notes"},
		{"add invalid", url.Values{"title": {""}}, "/learn/notes?error=invalid_title"},
		{"edit", url.Values{"_method": {"PUT"}, "id": {"1"}, "title": {"edited"}, "body": {"more"}}, "/learn/notes"},
		{"edit invalid", url.Values{"_method": {"PUT"}, "id": {"1"}, "title": {strings.Repeat("x", 201)}}, "/learn/notes?error=invalid_title"},
		{"edit bad id", url.Values{"_method": {"PUT"}, "id": {"x"}, "title": {"y"}}, "/learn/notes?error=invalid_id"},
		{"delete", url.Values{"_method": {"DELETE"}, "id": {"1"}}, "/learn/notes"},
		{"delete again", url.Values{"_method": {"DELETE"}, "id": {"1"}}, "/learn/notes?error=note_not_found"},
	}
	var titles []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.form("/api/learn/notes", tt.fields)
			if r.Status != http.StatusSeeOther || r.Header.Get("Location") != tt.location {
				t.Fatalf("%d Location %q, want 303 %q: %s", r.Status, r.Header.Get("Location"), tt.location, r.Body)
			}
			list := c.json("GET", "/api/learn/notes", nil)
			titles = append(titles, list.Body)
		})
	}
	if !strings.Contains(titles[0], `"title":"by form"`) || !strings.Contains(titles[2], `"title":"edited"`) || titles[5] != "[]" {
		t.Errorf("notes along the way: %q", titles)
	}
	// Logged out, a form post goes to the log-in page.
	c.form("/api/learn/logout", nil)
	r := c.form("/api/learn/notes", url.Values{"title": {"late"}})
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/learn/" {
		t.Errorf("logged out: %d Location %q", r.Status, r.Header.Get("Location"))
	}
}

// TestSampleNotesServerFailure: when the store fails, a browser's form post
// is sent back to the notes page with ?error=internal_error (which the page
// explains), a JSON client gets a 500 internal_error, and the failure is in
// the log either way.
func TestSampleNotesServerFailure(t *testing.T) {
	srv := newSampleServer(t)
	c := srv.client(t)
	c.register("failing", "password1")
	note := c.addNote("kept", "body")
	id := jsonNumber(note["id"])
	page := c.do("GET", "/learn/notes?error=internal_error", nil, "Accept", "text/html")
	if !strings.Contains(page.Body, "Something went wrong on our side") {
		t.Errorf("the page does not explain internal_error: %s", page.Body)
	}
	// The notes table goes away under the server: accounts still work.
	if err := srv.Store.DB().Exec("DROP TABLE notes").Error; err != nil {
		t.Fatal(err)
	}
	r := c.form("/api/learn/notes", url.Values{"_method": {"DELETE"}, "id": {id}})
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/learn/notes?error=internal_error" {
		t.Fatalf("form delete: %d %q", r.Status, r.Header.Get("Location"))
	}
	j := c.json("DELETE", "/api/learn/notes?id="+id, nil)
	if j.Status != http.StatusInternalServerError || j.JSON(t)["error"] != "internal_error" {
		t.Errorf("JSON delete: %d %s", j.Status, j.Body)
	}
	if logs := srv.Log.String(); strings.Count(logs, "no such table: notes") < 2 {
		t.Errorf("the failures are not logged:\n%s", logs)
	}
}
