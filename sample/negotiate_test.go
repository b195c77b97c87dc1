package main

import (
	"net/url"
	"strings"
	"testing"
)

// TestSampleAcceptHeaders: the sample's endpoints decide between a page
// (a redirect) and JSON by host's negotiation (api.PrefersHTML), the rule
// the framework's error pages follow: a browser's Accept header gets the
// redirect, every other client JSON, whatever the body's type. Each case
// runs against a form post to the notes API, a JSON log-in and a logout.
func TestSampleAcceptHeaders(t *testing.T) {
	srv := newSampleServer(t)
	srv.client(t).register("acceptor", "password1")
	cases := []struct {
		name, accept string
		page         bool // a redirect; else JSON
	}{
		{"no header", "", false},
		{"*/* alone (curl)", "*/*", false},
		{"Chrome", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7", true},
		{"Firefox", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true},
		{"text/html", "text/html", true},
		{"application/json", "application/json", false},
		{"axios", "application/json, text/plain, */*", false},
		{"JSON by q", "text/html;q=0.5, application/json", false},
		{"HTML by q", "application/json;q=0.5, text/html", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := srv.client(t)
			hdr := func(kv ...string) []string {
				if tc.accept != "" {
					kv = append(kv, "Accept", tc.accept)
				}
				return kv
			}
			login := c.do("POST", "/api/learn/login", strings.NewReader(`{"username":"acceptor","password":"password1"}`),
				hdr("Content-Type", "application/json")...)
			note := c.do("POST", "/api/learn/notes", strings.NewReader(url.Values{"title": {"t"}, "body": {"b"}}.Encode()),
				hdr("Content-Type", "application/x-www-form-urlencoded")...)
			logout := c.do("POST", "/api/learn/logout", nil, hdr()...)
			for _, x := range []struct {
				what     string
				r        reply
				jsonCode int
				location string
			}{
				{"log-in", login, 200, "/learn/notes"},
				{"note", note, 201, "/learn/notes"},
				{"logout", logout, 200, "/learn/"},
			} {
				if tc.page {
					if x.r.Status != 303 || x.r.Header.Get("Location") != x.location {
						t.Errorf("%s: %d Location %q, want 303 %s: %.80s", x.what, x.r.Status, x.r.Header.Get("Location"), x.location, x.r.Body)
					}
					continue
				}
				if x.r.Status != x.jsonCode || x.r.Header.Get("Content-Type") != "application/json" {
					t.Errorf("%s: %d %q, want %d JSON: %.80s", x.what, x.r.Status, x.r.Header.Get("Content-Type"), x.jsonCode, x.r.Body)
				}
			}
		})
	}
}
