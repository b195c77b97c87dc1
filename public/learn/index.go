//go:build ignore

package main

import (
	"html/template"
	"strings"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/sample/store"
)

// index serves /learn/: the log-in and registration forms of the notes
// application. They post to /api/learn/login and /api/learn/register and
// work without JavaScript.
var index = func(api *host.API, s *store.Store) any {
	data := map[string]any{"User": ""}
	if u := s.CurrentUser(api.G()); u != nil {
		data["User"] = u.Username
	}
	var b strings.Builder
	if err := indexPage.Execute(&b, data); err != nil {
		return err
	}
	return b.String()
}

var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Log in · zealgo notes</title>
<link rel="stylesheet" href="/css/style.css">
<link rel="stylesheet" href="/css/learn.css">
</head>
<body class="learn">
<header class="learn-bar">
<a class="learn-brand" href="/learn/">zealgo notes</a>
{{if .User}}<span class="learn-who">Logged in as <strong>{{.User}}</strong> · <a href="/learn/notes">your notes</a></span>{{end}}
</header>
<main class="learn-auth">
<section class="learn-card" aria-labelledby="login-title">
<h1 id="login-title">Log in</h1>
<form id="login" class="learn-form" method="post" action="/api/learn/login">
<label for="login-username">Username</label>
<input id="login-username" name="username" autocomplete="username" required>
<label for="login-password">Password</label>
<input id="login-password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Log in</button>
</form>
</section>
<section class="learn-card" id="register" aria-labelledby="register-title">
<h2 id="register-title">Create an account</h2>
<form id="register-form" class="learn-form" method="post" action="/api/learn/register">
<label for="register-username">Username</label>
<input id="register-username" name="username" autocomplete="username" required minlength="3" maxlength="64" pattern="[A-Za-z0-9_.\-]+" aria-describedby="register-username-rule">
<small id="register-username-rule">3 to 64 letters, digits, underscores, dots or hyphens.</small>
<label for="register-password">Password</label>
<input id="register-password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="72" aria-describedby="register-password-rule">
<small id="register-password-rule">8 to 72 characters.</small>
<button type="submit">Register</button>
</form>
</section>
</main>
</body>
</html>
`))
