package main

import (
	"net/http"
	"net/url"
	"testing"
)

// TestSampleLogout covers /api/learn/logout: a POST logs out, a browser
// is sent to the log-in page, a JSON client gets {"logged_out":true};
// every other method gets 405 and logs nobody out (issue 14: a
// cross-site link must not log users out).
func TestSampleLogout(t *testing.T) {
	srv := newSampleServer(t)
	for _, method := range []string{"GET", "DELETE", "PUT"} {
		t.Run(method+" refused", func(t *testing.T) {
			c := srv.client(t)
			c.register("stay"+method, "password1")
			r := c.do(method, "/api/learn/logout", nil, "Accept", "text/html")
			if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST, OPTIONS" {
				t.Errorf("%d Allow %q %s", r.Status, r.Header.Get("Allow"), r.Body)
			}
			if n := c.json("GET", "/api/learn/notes", nil); n.Status != http.StatusOK {
				t.Errorf("logged out by a %s: %d %s", method, n.Status, n.Body)
			}
		})
	}
	tests := []struct {
		method string
		json   bool
	}{
		{"POST", false}, {"POST", true},
	}
	for _, tt := range tests {
		name := tt.method
		if tt.json {
			name += " json"
		}
		t.Run(name, func(t *testing.T) {
			c := srv.client(t)
			c.register("out"+tt.method+map[bool]string{true: "j", false: "f"}[tt.json], "password1")
			var r reply
			if tt.json {
				r = c.json(tt.method, "/api/learn/logout", nil)
			} else {
				r = c.do(tt.method, "/api/learn/logout", nil, "Accept", "text/html")
			}
			switch {
			case tt.json && (r.Status != 200 || r.Body != `{"logged_out":true}`):
				t.Errorf("%d %s", r.Status, r.Body)
			case !tt.json && (r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/learn/"):
				t.Errorf("%d Location %q", r.Status, r.Header.Get("Location"))
			}
			if n := c.json("GET", "/api/learn/notes", nil); n.Status != http.StatusUnauthorized {
				t.Errorf("still logged in: %d %s", n.Status, n.Body)
			}
		})
	}
	t.Run("not logged in", func(t *testing.T) {
		r := srv.client(t).json("POST", "/api/learn/logout", nil)
		if r.Status != 200 || r.Body != `{"logged_out":true}` {
			t.Errorf("%d %s", r.Status, r.Body)
		}
	})
}

// TestSampleSessionRotation: registering, logging in and logging out each
// change the session id, and the id held before stops working.
func TestSampleSessionRotation(t *testing.T) {
	srv := newSampleServer(t)
	c := srv.client(t)
	c.register("rotor", "password1")
	srv.client(t).register("other", "password1")
	registered := c.session()
	if registered == "" {
		t.Fatal("no session cookie after registering")
	}

	// Logging in (here as another account) from a logged-in session.
	r := c.form("/api/learn/login", url.Values{"username": {"other"}, "password": {"password1"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	loggedIn := c.session()
	if loggedIn == "" || loggedIn == registered {
		t.Fatalf("the session cookie did not change on login")
	}
	if who := asCookie(t, srv, registered); who != http.StatusUnauthorized {
		t.Errorf("the pre-login session still works: %d", who)
	}
	if who := asCookie(t, srv, loggedIn); who != http.StatusOK {
		t.Errorf("the new session does not work: %d", who)
	}

	// Registering a new account from a logged-in session.
	c.form("/api/learn/register", url.Values{"username": {"third"}, "password": {"password1"}})
	registeredAgain := c.session()
	if registeredAgain == "" || registeredAgain == loggedIn {
		t.Fatalf("the session cookie did not change on registration")
	}
	if who := asCookie(t, srv, loggedIn); who != http.StatusUnauthorized {
		t.Errorf("the pre-registration session still works: %d", who)
	}

	c.form("/api/learn/logout", nil)
	if who := asCookie(t, srv, registeredAgain); who != http.StatusUnauthorized {
		t.Errorf("the session survives logout: %d", who)
	}
	if after := c.session(); after == registeredAgain {
		t.Error("the browser keeps its logged-in session id after logout")
	}
}

// asCookie returns the notes API's status for a client holding only the
// given session cookie.
func asCookie(t *testing.T, srv *sampleServer, value string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/api/learn/notes", nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: value})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
