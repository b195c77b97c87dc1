package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSampleNotesIDWhere: PUT and DELETE take the note id the same ways,
// from the query or, when the query has none, from the body (a form field,
// a JSON number or a JSON string); another account's id is 404 either way.
func TestSampleNotesIDWhere(t *testing.T) {
	srv := newSampleServer(t)
	c := srv.client(t)
	c.register("idwhere", "password1")
	other := srv.client(t)
	other.register("idother", "password1")
	foreign := jsonNumber(other.addNote("not yours", "")["id"])

	form := func(method, path string, v url.Values) reply {
		return c.do(method, path, strings.NewReader(v.Encode()), "Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json")
	}
	for _, method := range []string{"PUT", "DELETE"} {
		ways := []struct {
			name string
			send func(id string) reply
		}{
			{"query", func(id string) reply { return c.json(method, "/api/learn/notes?id="+id, map[string]any{"title": "t"}) }},
			{"JSON number", func(id string) reply {
				return c.json(method, "/api/learn/notes", map[string]any{"id": jsonRaw(id), "title": "t"})
			}},
			{"JSON string", func(id string) reply {
				return c.json(method, "/api/learn/notes", map[string]any{"id": id, "title": "t"})
			}},
			{"form field", func(id string) reply { return form(method, "/api/learn/notes", url.Values{"id": {id}, "title": {"t"}}) }},
		}
		for _, w := range ways {
			t.Run(method+" "+w.name, func(t *testing.T) {
				id := jsonNumber(c.addNote("mine", "")["id"])
				r := w.send(id)
				if r.Status != http.StatusOK || jsonNumber(r.JSON(t)["id"]) != id {
					t.Fatalf("%d %s, want 200 for note %s", r.Status, r.Body, id)
				}
				gone := c.json("GET", "/api/learn/notes?id="+id, nil).Status == http.StatusNotFound
				if gone != (method == "DELETE") {
					t.Errorf("after %s the note is gone: %v", method, gone)
				}
				if r := w.send(foreign); r.Status != http.StatusNotFound {
					t.Errorf("another account's note: %d %s, want 404", r.Status, r.Body)
				}
			})
		}
		t.Run(method+" no id", func(t *testing.T) {
			r := form(method, "/api/learn/notes", url.Values{"title": {"t"}})
			if r.Status != http.StatusUnprocessableEntity || r.JSON(t)["error"] != "invalid_id" {
				t.Errorf("%d %s, want 422 invalid_id", r.Status, r.Body)
			}
		})
	}
	if r := other.json("GET", "/api/learn/notes?id="+foreign, nil); r.Status != http.StatusOK {
		t.Errorf("the other account's note after all that: %d %s", r.Status, r.Body)
	}
}

// jsonRaw is a JSON number with the digits of s.
type jsonRaw string

func (j jsonRaw) MarshalJSON() ([]byte, error) { return []byte(j), nil }
