package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSampleAuthFormAgain: a browser's failed log-in or registration gets
// the /learn/ page again, with its status, the error beside the form that
// failed, the username as typed in that form and the cursor where the
// user types next; the other form stays empty.
func TestSampleAuthFormAgain(t *testing.T) {
	srv := newSampleServer(t)
	srv.client(t).register("taken", "password1")

	tests := []struct {
		name, path         string
		username, password string
		status             int
		want, not          []string
	}{
		{"wrong password", "/api/learn/login", "taken", "password2", http.StatusUnauthorized, []string{
			`<p class="auth-error" id="login-error" role="alert">Wrong username or password.</p>`,
			`<input id="login-username" name="username" autocomplete="username" required value="taken">`,
			`<input id="login-password" name="password" type="password" autocomplete="current-password" required autofocus>`,
			`aria-describedby="register-username-rule">`, // the registration form: no value, no focus
		}, []string{"register-error", "password2"}},
		{"no username", "/api/learn/login", "", "password2", http.StatusUnauthorized, []string{
			`id="login-error"`,
			`<input id="login-username" name="username" autocomplete="username" required autofocus>`,
		}, []string{`value=`}},
		{"markup in the username", "/api/learn/login", `"><script>x()</script>`, "password2", http.StatusUnauthorized, []string{
			`value="&#34;&gt;&lt;script&gt;x()&lt;/script&gt;"`,
		}, []string{"<script>"}},
		{"taken", "/api/learn/register", "taken", "password3", http.StatusConflict, []string{
			`<p class="auth-error" id="register-error" role="alert">That username is taken. Choose another one.</p>`,
			`aria-describedby="register-username-rule" value="taken" autofocus>`,
			`<input id="login-username" name="username" autocomplete="username" required>`,
			"<title>Register · zealgo notes</title>",
		}, []string{"login-error", "password3"}},
		{"short password", "/api/learn/register", "newname", "short", http.StatusUnprocessableEntity, []string{
			`id="register-error"`,
			`aria-describedby="register-username-rule" value="newname">`,
			`aria-describedby="register-password-rule" autofocus>`,
		}, []string{"login-error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := srv.client(t).form(tt.path, url.Values{"username": {tt.username}, "password": {tt.password}})
			if r.Status != tt.status || r.Header.Get("Content-Type") != htmlType {
				t.Fatalf("%d %q, want %d HTML: %s", r.Status, r.Header.Get("Content-Type"), tt.status, r.Body)
			}
			// The page is /learn/'s: both forms, posting where they did.
			for _, w := range append(tt.want, `<form id="login" class="learn-form" method="post" action="/api/learn/login">`,
				`<form id="register-form" class="learn-form" method="post" action="/api/learn/register">`) {
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
}

// TestSampleErrorPageLinksHome: the sample's HTML 404 page has a way home.
func TestSampleErrorPageLinksHome(t *testing.T) {
	srv := newSampleServer(t)
	for _, p := range []string{"/no-such-page", "/learn/no-such-page"} {
		r := srv.client(t).do("GET", p, nil, "Accept", "text/html")
		if r.Status != http.StatusNotFound || !strings.Contains(r.Body, `<a href="/">`) {
			t.Errorf("%s: %d, want 404 with a link to /:\n%s", p, r.Status, r.Body)
		}
	}
}
