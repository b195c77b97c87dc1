package main

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// curlForm posts url-encoded fields as curl -d does, with the Accept
// header given ("" sends none; curl's own is */*).
func (c *client) curlForm(path, accept string, fields url.Values) reply {
	c.t.Helper()
	header := []string{"Content-Type", "application/x-www-form-urlencoded"}
	if accept != "" {
		header = append(header, "Accept", accept)
	}
	return c.do("POST", path, strings.NewReader(fields.Encode()), header...)
}

// TestSampleFormFlowAnyAccept: register and login answer a form POST as
// the spec says whatever its Accept header (none, curl's */*, a
// browser's): a redirect to the notes page on success, 409 text/html with
// an auth-error paragraph for a taken name, 401 with an HTML body for
// wrong credentials. A client that asks for JSON, or sends it, keeps the
// JSON answers (issue 30, item 6).
func TestSampleFormFlowAnyAccept(t *testing.T) {
	srv := newSampleServer(t)
	for i, accept := range []string{"", "*/*", "text/html,application/xhtml+xml,*/*;q=0.8"} {
		name := "former" + string(rune('a'+i))
		fields := url.Values{"username": {name}, "password": {"password1"}}
		c := srv.client(t)
		if r := c.curlForm("/api/learn/register", accept, fields); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/learn/notes" {
			t.Errorf("Accept %q: register: %d Location %q %.80s", accept, r.Status, r.Header.Get("Location"), r.Body)
		}
		if r := c.json("GET", "/api/learn/notes", nil); r.Status != http.StatusOK {
			t.Errorf("Accept %q: not logged in after registering: %d", accept, r.Status)
		}
		r := srv.client(t).curlForm("/api/learn/register", accept, fields)
		if r.Status != http.StatusConflict || r.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
			!strings.Contains(r.Body, `<p class="auth-error" id="register-error" role="alert">That username is taken.`) {
			t.Errorf("Accept %q: taken: %d %q %.200s", accept, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		c = srv.client(t)
		if r := c.curlForm("/api/learn/login", accept, fields); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/learn/notes" {
			t.Errorf("Accept %q: login: %d Location %q %.80s", accept, r.Status, r.Header.Get("Location"), r.Body)
		}
		if r := c.json("GET", "/api/learn/notes", nil); r.Status != http.StatusOK {
			t.Errorf("Accept %q: not logged in after logging in: %d", accept, r.Status)
		}
		r = srv.client(t).curlForm("/api/learn/login", accept, url.Values{"username": {name}, "password": {"wrong-one"}})
		if r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(r.Body, `id="login-error"`) {
			t.Errorf("Accept %q: wrong password: %d %q %.200s", accept, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	}
	// Asking for JSON, or sending it: JSON, as before.
	c := srv.client(t)
	fields := url.Values{"username": {"jsoner"}, "password": {"password1"}}
	for _, x := range []struct {
		what   string
		r      reply
		status int
	}{
		{"register", c.curlForm("/api/learn/register", "application/json", fields), http.StatusCreated},
		{"taken", c.curlForm("/api/learn/register", "application/json", fields), http.StatusConflict},
		{"login", c.curlForm("/api/learn/login", "application/json", fields), http.StatusOK},
		{"wrong password", c.curlForm("/api/learn/login", "application/json", url.Values{"username": {"jsoner"}, "password": {"wrong-one"}}), http.StatusUnauthorized},
		{"JSON body, no Accept", c.do("POST", "/api/learn/login", strings.NewReader(`{"username":"jsoner","password":"password1"}`),
			"Content-Type", "application/json"), http.StatusOK},
	} {
		if x.r.Status != x.status || x.r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q, want %d JSON: %.80s", x.what, x.r.Status, x.r.Header.Get("Content-Type"), x.status, x.r.Body)
		}
	}
}

// TestSampleFormRegistrationRace: 20 curl-like form registrations of one
// name at once: one redirect, 19 HTML 409s, one account row (the spec's
// race check).
func TestSampleFormRegistrationRace(t *testing.T) {
	srv := newSampleServer(t)
	const n = 20
	replies := make([]reply, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		c := srv.client(t)
		wg.Go(func() {
			<-start
			replies[i] = c.curlForm("/api/learn/register", "", url.Values{"username": {"racer"}, "password": {"password1"}})
		})
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	for i, r := range replies {
		count[r.Status]++
		if r.Status == http.StatusConflict && !strings.Contains(r.Body, `class="auth-error"`) {
			t.Errorf("client %d: 409 without the auth-error paragraph: %.200s", i, r.Body)
		}
	}
	if count[http.StatusSeeOther] != 1 || count[http.StatusConflict] != n-1 {
		t.Errorf("statuses %v, want one 303 and %d x 409", count, n-1)
	}
	var rows int64
	if err := srv.Store.DB().Raw("SELECT count(*) FROM users WHERE username = ?", "racer").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("%d account rows, want 1", rows)
	}
}
