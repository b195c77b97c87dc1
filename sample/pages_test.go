package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestSamplePages covers the pages under public/learn/ and the
// stylesheet, as a browser without JavaScript fetches them.
func TestSamplePages(t *testing.T) {
	srv := newSampleServer(t)
	anon := srv.client(t)
	user := srv.client(t)
	user.register("pageuser", "password1")
	note := user.addNote(`  <i>Tom & "Jerry"</i>`, "line one\nline <b>two</b>  ")
	// A note is kept as typed, tags and spaces included, and escaped on the page.
	if note["title"] != `  <i>Tom & "Jerry"</i>` || note["body"] != "line one\nline <b>two</b>  " {
		t.Fatalf("stored title %q", note["title"])
	}
	id := jsonNumber(note["id"])

	tests := []struct {
		name     string
		c        *client
		path     string
		status   int
		location string
		want     []string
		not      []string
	}{
		{"log-in page", anon, "/learn/", 200, "", []string{
			`<form id="login" class="learn-form" method="post" action="/api/learn/login">`,
			`action="/api/learn/register"`, `name="username"`, `name="password"`, `type="password"`,
			`href="/css/learn.css"`,
		}, []string{"Logged in as", `href="/css/style.css"`, `class="auth-error"`}},
		{"log-in page, logged in", user, "/learn/", http.StatusSeeOther, "/learn/notes", nil, nil},
		{"notes page, logged out", anon, "/learn/notes", http.StatusSeeOther, "/learn/", nil, nil},
		{"notes page", user, "/learn/notes", 200, "", []string{
			`<strong id="who">pageuser</strong>`,
			`<h3 class="note-title">  &lt;i&gt;Tom &amp; &#34;Jerry&#34;&lt;/i&gt;</h3>`,
			"line one\nline &lt;b&gt;two&lt;/b&gt;",
			`<form id="add-note" class="learn-form" method="post" action="/api/learn/notes">`,
			`<input type="hidden" name="_method" value="DELETE"><input type="hidden" name="id" value="` + id + `">`,
			`href="/learn/notes?edit=` + id + `#note-` + id + `"`,
			`action="/api/learn/logout"`,
		}, []string{"<i>", "<b>", `name="_method" value="PUT"`, `class="note-error"`}},
		{"notes page, editing", user, "/learn/notes?edit=" + id, 200, "", []string{
			`<input type="hidden" name="_method" value="PUT">`,
			`value="  &lt;i&gt;Tom &amp; &#34;Jerry&#34;&lt;/i&gt;"`,
			">line one\nline &lt;b&gt;two&lt;/b&gt;  </textarea>",
		}, nil},
		{"notes page, known error", user, "/learn/notes?error=invalid_title", 200, "", []string{
			`<p class="note-error" role="alert">A note needs a title of 1 to 200 characters.</p>`,
		}, nil},
		{"notes page, unknown error", user, "/learn/notes?error=%3Cscript%3Ealert(1)%3C/script%3E", 200, "", nil, []string{"note-error", "alert(1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.c.do("GET", tt.path, nil, "Accept", "text/html")
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if tt.location != "" && r.Header.Get("Location") != tt.location {
				t.Errorf("Location %q, want %q", r.Header.Get("Location"), tt.location)
			}
			if r.Status == 200 && r.Header.Get("Content-Type") != htmlType {
				t.Errorf("Content-Type %q", r.Header.Get("Content-Type"))
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Body, w) {
					t.Errorf("page lacks %q:\n%s", w, r.Body)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(r.Body, n) {
					t.Errorf("page has %q:\n%s", n, r.Body)
				}
			}
		})
	}

	t.Run("stylesheet", func(t *testing.T) {
		r := anon.do("GET", "/css/learn.css", nil)
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/css") || !strings.Contains(r.Body, ".auth-error") {
			t.Errorf("%d %q %.80s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	})
	t.Run("page source is never sent", func(t *testing.T) {
		for _, p := range []string{"/learn/notes.go", "/learn/index.go"} {
			if r := anon.do("GET", p, nil); r.Status != http.StatusNotFound || strings.Contains(r.Body, "package main") {
				t.Errorf("%s: %d %.80s", p, r.Status, r.Body)
			}
		}
	})
}
