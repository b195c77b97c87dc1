package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/sample/store"
	"golang.org/x/crypto/bcrypt"
)

// sampleServer is the sample application on a loopback httptest server,
// serving the repository's api/ and public/ with a fresh data directory.
type sampleServer struct {
	URL   string
	Store *store.Store
	Log   *testutil.Buffer
}

// testHashCost is the bcrypt cost of the passwords that the sample's
// tests register (store.Store.SetHashCost): bcrypt's minimum, 64 times
// less work than the default, whose hashes take over a second of CPU each
// under -race. The tests whose property depends on the cost keep the
// default (newSampleServerCost): TestSamplePasswordHash checks it, and
// TestSampleLoginFlood needs verifications slow enough to starve a server
// that would not bound them.
const testHashCost = bcrypt.MinCost

// newSampleServer serves the sample; opts apply after the test defaults.
// Tests send many failed log-ins and registrations from one address, so
// the throttle of the log-in and registration endpoints allows 1000 a
// minute unless opts say otherwise (throttle_test.go keeps the default).
// Passwords are hashed at testHashCost.
func newSampleServer(t *testing.T, opts ...host.Option) *sampleServer {
	t.Helper()
	return newSampleServerCost(t, testHashCost, opts...)
}

// newSampleServerCost is newSampleServer hashing passwords at the given
// bcrypt cost.
func newSampleServerCost(t *testing.T, cost int, opts ...host.Option) *sampleServer {
	t.Helper()
	log := &testutil.Buffer{}
	opts = append([]host.Option{host.WithRoot(".."), host.WithDataDir(t.TempDir()), host.WithLogOutput(log, slog.LevelInfo),
		host.WithConfig(func(c *host.Config) {
			c.ThrottleLimit = 1000
			// 50 registrations at once (bcrypt, under -race on 2 cores)
			// may take longer than the 30 s default; the limit has tests
			// of its own.
			c.MaxExecutionTime = 5 * time.Minute
		})}, opts...)
	app := host.New(opts...)
	s := setup(app)
	s.SetHashCost(cost)
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		_ = app.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	return &sampleServer{URL: srv.URL, Store: s, Log: log}
}

// client is a browser-like HTTP client with its own cookie jar that does
// not follow redirects, so that tests see the 303s.
type client struct {
	t    *testing.T
	base string
	jar  *cookiejar.Jar
	c    *http.Client
}

func (s *sampleServer) client(t *testing.T) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: s.URL, jar: jar, c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// reply is a response with its body read.
type reply struct {
	Status int
	Header http.Header
	Body   string
}

// JSON decodes the body into a map (or fails the test).
func (r reply) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Body), &m); err != nil {
		t.Fatalf("body is not a JSON object (%v): %q", err, r.Body)
	}
	return m
}

// do sends a request; header pairs follow the body.
func (c *client) do(method, path string, body io.Reader, header ...string) reply {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// form posts url-encoded fields as a browser's form does (Accept: text/html).
func (c *client) form(path string, fields url.Values) reply {
	c.t.Helper()
	return c.do("POST", path, strings.NewReader(fields.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
}

// json sends v as a JSON body (nil: no body) and asks for JSON.
func (c *client) json(method, path string, v any) reply {
	c.t.Helper()
	var body io.Reader
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			c.t.Fatal(err)
		}
		body = bytes.NewReader(b)
		return c.do(method, path, body, "Content-Type", "application/json", "Accept", "application/json")
	}
	return c.do(method, path, nil, "Accept", "application/json")
}

// session returns the value of the session cookie the client holds.
func (c *client) session() string {
	u, _ := url.Parse(c.base)
	for _, ck := range c.jar.Cookies(u) {
		if ck.Name == sessionCookie {
			return ck.Value
		}
	}
	return ""
}

// register creates an account through the JSON endpoint and returns its id.
func (c *client) register(username, password string) int64 {
	c.t.Helper()
	r := c.json("POST", "/api/learn/register", map[string]any{"username": username, "password": password})
	if r.Status != http.StatusCreated {
		c.t.Fatalf("register %q: %d %s", username, r.Status, r.Body)
	}
	return int64(r.JSON(c.t)["user_id"].(float64))
}

// addNote creates a note through the JSON endpoint and returns it.
func (c *client) addNote(title, body string) map[string]any {
	c.t.Helper()
	r := c.json("POST", "/api/learn/notes", map[string]any{"title": title, "body": body})
	if r.Status != http.StatusCreated {
		c.t.Fatalf("add note %q: %d %s", title, r.Status, r.Body)
	}
	return r.JSON(c.t)
}

func noteURL(id any) string { return "/api/learn/notes?id=" + jsonNumber(id) }

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sessionCookie is the session cookie's default name.
const sessionCookie = "zealgo_session"

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
