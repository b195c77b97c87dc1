package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

const htmlType = "text/html; charset=utf-8"

// TestSampleRegister covers every row of POST /api/learn/register, for a
// browser's form post and for a JSON client.
func TestSampleRegister(t *testing.T) {
	srv := newSampleServer(t)
	taken := srv.client(t)
	taken.register("taken", "password1")

	long := strings.Repeat("a", 64)
	pw72 := strings.Repeat("p", 72)
	tests := []struct {
		name               string
		username, password string
		json               bool
		status             int
		want               string // in the body (HTML) or the error code (JSON)
	}{
		{"form ok", "alice", "correct horse", false, http.StatusSeeOther, ""},
		{"form 3-char name, 8-byte password", "bob", "12345678", false, http.StatusSeeOther, ""},
		{"form 64-char name, 72-byte password", long, pw72, false, http.StatusSeeOther, ""},
		{"form dots hyphens underscores", "a.b-c_D9", "password", false, http.StatusSeeOther, ""},
		{"json ok", "carol", "password1", true, http.StatusCreated, ""},
		{"form taken", "taken", "password2", false, http.StatusConflict, "taken"},
		{"json taken", "taken", "password2", true, http.StatusConflict, "username_taken"},
		{"form name too short", "ab", "password", false, http.StatusUnprocessableEntity, "username"},
		{"form name too long", long + "a", "password", false, http.StatusUnprocessableEntity, "username"},
		{"form name with space", "a b c", "password", false, http.StatusUnprocessableEntity, "username"},
		{"form name with quote", "admin'--", "password", false, http.StatusUnprocessableEntity, "username"},
		{"form name non-ascii", "zoë-x", "password", false, http.StatusUnprocessableEntity, "username"},
		{"form empty name", "", "password", false, http.StatusUnprocessableEntity, "username"},
		{"form password 7 bytes", "dave", "1234567", false, http.StatusUnprocessableEntity, "password"},
		{"form password 73 bytes", "dave", pw72 + "p", false, http.StatusUnprocessableEntity, "password"},
		{"json name too short", "ab", "password", true, http.StatusUnprocessableEntity, "invalid_username"},
		{"json password too short", "erin", "short", true, http.StatusUnprocessableEntity, "invalid_password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := srv.client(t)
			var r reply
			if tt.json {
				r = c.json("POST", "/api/learn/register", map[string]any{"username": tt.username, "password": tt.password})
			} else {
				r = c.form("/api/learn/register", url.Values{"username": {tt.username}, "password": {tt.password}})
			}
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			switch {
			case tt.status == http.StatusSeeOther:
				if loc := r.Header.Get("Location"); loc != "/learn/notes" {
					t.Errorf("Location %q, want /learn/notes", loc)
				}
				// Logged in: the notes API answers.
				if n := c.json("GET", "/api/learn/notes", nil); n.Status != http.StatusOK || n.Body != "[]" {
					t.Errorf("notes after registering: %d %s", n.Status, n.Body)
				}
			case tt.status == http.StatusCreated:
				m := r.JSON(t)
				if m["username"] != tt.username || m["user_id"] == nil {
					t.Errorf("body %s, want user_id and username %q", r.Body, tt.username)
				}
				if c.session() == "" {
					t.Error("no session cookie after registering")
				}
			case tt.json:
				m := r.JSON(t)
				if m["error"] != tt.want || m["hint"] == "" {
					t.Errorf("body %s, want error %q with a hint", r.Body, tt.want)
				}
			default:
				if ct := r.Header.Get("Content-Type"); ct != htmlType {
					t.Errorf("Content-Type %q, want %q", ct, htmlType)
				}
				if !strings.Contains(r.Body, `<p class="auth-error"`) || !strings.Contains(r.Body, tt.want) {
					t.Errorf("body lacks the auth-error paragraph about %q: %s", tt.want, r.Body)
				}
				if c.session() != "" {
					t.Error("a failed registration set a session cookie")
				}
			}
		})
	}

	t.Run("GET is 405", func(t *testing.T) {
		r := srv.client(t).do("GET", "/api/learn/register", nil)
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST, OPTIONS" {
			t.Errorf("%d Allow %q: %s", r.Status, r.Header.Get("Allow"), r.Body)
		}
	})
}

// TestSamplePasswordHash checks that the stored hash is a bcrypt hash of
// the password at the default cost, never the password itself, and that
// the users table has exactly the spec's columns.
func TestSamplePasswordHash(t *testing.T) {
	srv := newSampleServerCost(t, bcrypt.DefaultCost)
	const password = "s3cret-passphrase"
	id := srv.client(t).register("hashcheck", password)

	var row struct {
		ID           int64
		Username     string
		PasswordHash string
		CreatedAt    int64
	}
	if err := srv.Store.DB().Raw("SELECT id, username, password_hash, created_at FROM users WHERE id = ?", id).Scan(&row).Error; err != nil {
		t.Fatal(err)
	}
	if row.Username != "hashcheck" || row.CreatedAt == 0 {
		t.Fatalf("row %+v", row)
	}
	if row.PasswordHash == password || strings.Contains(row.PasswordHash, password) {
		t.Fatalf("the password is stored as it is: %q", row.PasswordHash)
	}
	if err := bcrypt.CompareHashAndPassword([]byte(row.PasswordHash), []byte(password)); err != nil {
		t.Fatalf("the hash does not verify: %v", err)
	}
	if cost, err := bcrypt.Cost([]byte(row.PasswordHash)); err != nil || cost != bcrypt.DefaultCost {
		t.Errorf("bcrypt cost %d (%v), want %d", cost, err, bcrypt.DefaultCost)
	}

	var cols []struct {
		Name    string
		Type    string
		Notnull int
		Pk      int
	}
	if err := srv.Store.DB().Raw("SELECT name, type, \"notnull\", pk FROM pragma_table_info('users') ORDER BY cid").Scan(&cols).Error; err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cols {
		got = append(got, c.Name)
	}
	if strings.Join(got, ",") != "id,username,password_hash,created_at" {
		t.Errorf("users columns %v, want id, username, password_hash, created_at", got)
	}
	var ddl string
	srv.Store.DB().Raw("SELECT sql FROM sqlite_master WHERE name = 'users'").Scan(&ddl)
	for _, want := range []string{"PRIMARY KEY AUTOINCREMENT", "`username` text NOT NULL", "UNIQUE (`username`)", "`password_hash` text NOT NULL", "`created_at` integer NOT NULL"} {
		if !strings.Contains(ddl, want) {
			t.Errorf("users DDL lacks %q: %s", want, ddl)
		}
	}
}

// TestSampleSQLLookingUsernames shows that usernames reach the database as
// parameters: SQL in a username is stored verbatim or refused, never run.
func TestSampleSQLLookingUsernames(t *testing.T) {
	srv := newSampleServer(t)
	victim := srv.client(t)
	victim.register("victim", "password1")

	// The store takes any non-empty username; the endpoint applies the charset.
	for _, name := range []string{
		"robert'); DROP TABLE users;--",
		`" OR 1=1 --`,
		"x' UNION SELECT password_hash FROM users --",
	} {
		id, ok := srv.Store.Register(name, "password1")
		if !ok {
			t.Fatalf("Register(%q) failed", name)
		}
		var stored string
		srv.Store.DB().Raw("SELECT username FROM users WHERE id = ?", id).Scan(&stored)
		if stored != name {
			t.Errorf("stored %q, want %q verbatim", stored, name)
		}
		if got, ok := srv.Store.Login(name, "password1"); !ok || got != id {
			t.Errorf("Login(%q) = %d, %v; want %d", name, got, ok, id)
		}
	}
	var n int64
	srv.Store.DB().Raw("SELECT count(*) FROM users").Scan(&n)
	if n != 4 {
		t.Errorf("%d users, want 4: the table was tampered with", n)
	}

	// Through HTTP: SQL-looking names inside the charset are stored
	// verbatim; quotes are refused by validation; login by injection fails.
	c := srv.client(t)
	id := c.register("or.1-1--", "password1")
	var stored string
	srv.Store.DB().Raw("SELECT username FROM users WHERE id = ?", id).Scan(&stored)
	if stored != "or.1-1--" {
		t.Errorf("stored %q", stored)
	}
	for _, name := range []string{"' OR '1'='1", "victim'--", "victim' OR 1=1 --"} {
		r := srv.client(t).json("POST", "/api/learn/login", map[string]any{"username": name, "password": "' OR '1'='1"})
		if r.Status != http.StatusUnauthorized {
			t.Errorf("login as %q: %d %s, want 401", name, r.Status, r.Body)
		}
	}
}

// TestSampleLogin covers every row of POST /api/learn/login.
func TestSampleLogin(t *testing.T) {
	srv := newSampleServer(t)
	srv.client(t).register("alice", "password-a")

	tests := []struct {
		name               string
		username, password string
		json               bool
		status             int
	}{
		{"form ok", "alice", "password-a", false, http.StatusSeeOther},
		{"json ok", "alice", "password-a", true, http.StatusOK},
		{"form wrong password", "alice", "password-b", false, http.StatusUnauthorized},
		{"form unknown user", "nobody", "password-a", false, http.StatusUnauthorized},
		{"form username case matters", "ALICE", "password-a", false, http.StatusUnauthorized},
		{"json wrong password", "alice", "nope-nope", true, http.StatusUnauthorized},
		{"json unknown user", "nobody", "password-a", true, http.StatusUnauthorized},
		{"form missing password", "alice", "", false, http.StatusUnauthorized},
		{"json missing username", "", "password-a", true, http.StatusUnauthorized},
	}
	var wrongBodies []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := srv.client(t)
			var r reply
			if tt.json {
				r = c.json("POST", "/api/learn/login", map[string]any{"username": tt.username, "password": tt.password})
			} else {
				r = c.form("/api/learn/login", url.Values{"username": {tt.username}, "password": {tt.password}})
			}
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			loggedIn := c.json("GET", "/api/learn/notes", nil).Status == http.StatusOK
			if ok := tt.status < 300 || tt.status == http.StatusSeeOther; ok != loggedIn {
				t.Errorf("logged in: %v, want %v", loggedIn, ok)
			}
			switch {
			case tt.status == http.StatusSeeOther:
				if loc := r.Header.Get("Location"); loc != "/learn/notes" {
					t.Errorf("Location %q", loc)
				}
			case tt.status == http.StatusOK:
				if m := r.JSON(t); m["username"] != "alice" || m["user_id"] == nil {
					t.Errorf("body %s", r.Body)
				}
			case tt.json:
				m := r.JSON(t)
				if m["error"] != "invalid_credentials" || m["hint"] == "" {
					t.Errorf("body %s", r.Body)
				}
				if tt.status == http.StatusUnauthorized {
					wrongBodies = append(wrongBodies, r.Body)
				}
			default:
				if ct := r.Header.Get("Content-Type"); ct != htmlType {
					t.Errorf("Content-Type %q", ct)
				}
				if !strings.Contains(r.Body, `<p class="auth-error"`) {
					t.Errorf("no auth-error paragraph: %s", r.Body)
				}
				if strings.Contains(r.Body, `id="logout"`) || !strings.Contains(r.Body, "<title>Log in · zealgo notes</title>") {
					t.Errorf("not the log-in failure page: %s", r.Body)
				}
				if tt.status == http.StatusUnauthorized {
					// The form comes back with the username as typed
					// (issue 14); the rest of the page is the same.
					wrongBodies = append(wrongBodies, strings.Replace(r.Body, ` value="`+tt.username+`"`, "", 1))
				}
			}
		})
	}
	// A wrong username, a wrong password and a missing field are
	// indistinguishable.
	distinct := map[string]bool{}
	for _, b := range wrongBodies {
		distinct[b] = true
	}
	if len(wrongBodies) != 7 || len(distinct) != 2 { // one HTML body, one JSON body
		t.Errorf("401 bodies differ between a wrong username and a wrong password: %q", wrongBodies)
	}
}
