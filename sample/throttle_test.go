package main

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
)

// TestSampleLoginThrottle: after 5 wrong passwords within a minute, every
// log-in attempt for the username gets 429 with Retry-After, the right
// password too, from any address; an address that failed 5 times is
// throttled for any username (issue 14, failure 6).
func TestSampleLoginThrottle(t *testing.T) {
	// 5 failures, refilled one every 12 minutes rather than 12 s, so that
	// slow bcrypt (under -race) cannot refill one during the test;
	// X-Forwarded-For names the client (a trusted proxy).
	srv := newSampleServer(t, host.WithConfig(func(c *host.Config) {
		c.ThrottleLimit, c.ThrottleWindow = 5, time.Hour
		c.TrustedProxies = []string{"127.0.0.1"}
	}))
	srv.client(t).register("victim", "correct horse")
	srv.client(t).register("bystander", "correct horse")
	c := srv.client(t)
	login := func(user, password, from string) reply {
		t.Helper()
		return c.do("POST", "/api/learn/login", strings.NewReader(`{"username":"`+user+`","password":"`+password+`"}`),
			"Content-Type", "application/json", "Accept", "application/json", "X-Forwarded-For", from)
	}
	for i := 1; i <= 5; i++ {
		if r := login("victim", "guess-"+strconv.Itoa(i), "203.0.113.1"); r.Status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d %s", i, r.Status, r.Body)
		}
	}
	throttled := func(what string, r reply) {
		t.Helper()
		secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if r.Status != http.StatusTooManyRequests || err != nil || secs < 1 || secs > 720 {
			t.Errorf("%s: %d Retry-After %q %s, want 429", what, r.Status, r.Header.Get("Retry-After"), r.Body)
		}
	}
	throttled("6th wrong password", login("victim", "guess-6", "203.0.113.1"))
	r := login("victim", "correct horse", "203.0.113.1")
	throttled("the right password while throttled", r)
	if m := r.JSON(t); m["error"] != "too_many_requests" {
		t.Errorf("body %s", r.Body)
	}
	if n := c.json("GET", "/api/learn/notes", nil); n.Status != http.StatusUnauthorized {
		t.Errorf("logged in through the throttle: %d", n.Status)
	}
	throttled("the username from another address", login("Victim", "correct horse", "203.0.113.2"))
	throttled("another username from the address", login("bystander", "correct horse", "203.0.113.1"))
	if r := login("bystander", "correct horse", "203.0.113.2"); r.Status != http.StatusOK {
		t.Errorf("another username from another address: %d %s", r.Status, r.Body)
	}
	// A browser gets the log-in failure page, with the same status and header.
	f := c.do("POST", "/api/learn/login", strings.NewReader(url.Values{"username": {"victim"}, "password": {"correct horse"}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html", "X-Forwarded-For", "203.0.113.3")
	throttled("a browser's form", f)
	if !strings.Contains(f.Body, "Too many failed attempts") || !strings.Contains(f.Header.Get("Content-Type"), "text/html") {
		t.Errorf("form: %s %s", f.Header.Get("Content-Type"), f.Body)
	}
}

// TestSampleRegisterThrottle: failed registrations (a taken or invalid
// username) count as log-ins do.
func TestSampleRegisterThrottle(t *testing.T) {
	srv := newSampleServer(t, host.WithConfig(func(c *host.Config) { c.ThrottleLimit, c.ThrottleWindow = 5, time.Hour }))
	srv.client(t).register("taken", "password1")
	c := srv.client(t)
	for i := 1; i <= 5; i++ {
		if r := c.json("POST", "/api/learn/register", map[string]any{"username": "taken", "password": "password1"}); r.Status != http.StatusConflict {
			t.Fatalf("attempt %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := c.json("POST", "/api/learn/register", map[string]any{"username": "fresh-name", "password": "password1"})
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("after 5 failures: %d Retry-After %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
}
