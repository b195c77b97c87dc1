package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSampleUsernameCase: `CaseUser` then `caseuser` is the answer to a
// taken name, 409, for a JSON client and for a browser; the account keeps
// the name as typed and logs in by it.
func TestSampleUsernameCase(t *testing.T) {
	srv := newSampleServer(t)
	srv.client(t).register("CaseUser", "password1")

	r := srv.client(t).json("POST", "/api/learn/register", map[string]any{"username": "caseuser", "password": "password2"})
	if r.Status != http.StatusConflict || r.JSON(t)["error"] != "username_taken" {
		t.Errorf("JSON caseuser: %d %s, want 409 username_taken", r.Status, r.Body)
	}
	c := srv.client(t)
	r = c.form("/api/learn/register", url.Values{"username": {"CASEUSER"}, "password": {"password2"}})
	if r.Status != http.StatusConflict || !strings.Contains(r.Body, `class="auth-error"`) || !strings.Contains(r.Body, "taken") {
		t.Errorf("form CASEUSER: %d %s, want 409 with the auth error", r.Status, r.Body)
	}
	if c.session() != "" {
		t.Error("a refused registration set a session cookie")
	}

	var names []string
	srv.Store.DB().Raw("SELECT username FROM users").Scan(&names)
	if len(names) != 1 || names[0] != "CaseUser" {
		t.Errorf("accounts %q, want only CaseUser as typed", names)
	}
	if r := srv.client(t).json("POST", "/api/learn/login", map[string]any{"username": "CaseUser", "password": "password1"}); r.Status != http.StatusOK || r.JSON(t)["username"] != "CaseUser" {
		t.Errorf("login as registered: %d %s", r.Status, r.Body)
	}
	if r := srv.client(t).json("POST", "/api/learn/login", map[string]any{"username": "caseuser", "password": "password1"}); r.Status != http.StatusUnauthorized {
		t.Errorf("login in another case: %d %s, want 401 (the name as registered)", r.Status, r.Body)
	}
}
