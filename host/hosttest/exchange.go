package hosttest

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"

	"github.com/zealgo/zealgo/host"
)

// server is an application under test served on loopback.
type server struct {
	app    *host.App
	srv    *httptest.Server
	client *http.Client
}

// start builds the application, configures it for the archive, starts it
// and serves it.
func start(a *archive, s *settings, root, dataDir string, logs *buffer) (*server, error) {
	app := s.newApp()
	if app == nil {
		return nil, fmt.Errorf("zealgo: hosttest: the App function returned nil")
	}
	opts := append(append([]host.Option{}, s.hostOpts...),
		host.WithRoot(root), host.WithDataDir(dataDir), host.WithLogOutput(logs, slog.LevelDebug))
	if a.dev {
		opts = append(opts, host.WithDev(true))
	}
	app.Configure(opts...)
	h, err := app.Handler()
	if err != nil {
		_ = app.Close()
		return nil, fmt.Errorf("zealgo: hosttest: starting the application: %w", err)
	}
	srv := httptest.NewServer(h)
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if a.cookies {
		client.Jar, _ = cookiejar.New(nil)
	}
	return &server{app: app, srv: srv, client: client}, nil
}

// close stops the server and the application.
func (s *server) close() {
	s.srv.Close()
	_ = s.app.Close()
}

// runExchanges sends the archive's requests in order, with the values
// captured so far in place of their {{NAME}}, and checks each response,
// stopping at a request that cannot be sent or a capture that finds
// nothing.
func (s *server) runExchanges(a *archive, set *settings, res *Result) {
	vars := map[string]string{}
	for _, x := range a.exchanges {
		got, err := s.send(x.substitute(vars))
		if err != nil {
			res.failf("%s %s: %v", x.name, x.line, err)
			return
		}
		res.Exchanges = append(res.Exchanges, got)
		x.check(got, a.forbid, set.trailingNewline, res)
		if !x.capture(got, vars, res) {
			return
		}
	}
}

// send sends x's request as written: no cleaning, no re-escaping of the
// target.
func (s *server) send(x exchange) (Exchange, error) {
	req, err := http.NewRequest(x.method, s.srv.URL, strings.NewReader(x.body))
	if err != nil {
		return Exchange{}, err
	}
	req.URL.Opaque, req.URL.RawQuery = x.target, ""
	if p, q, ok := strings.Cut(x.target, "?"); ok {
		req.URL.Opaque, req.URL.RawQuery = p, q
	}
	for _, h := range x.header {
		if strings.EqualFold(h.name, "Host") {
			req.Host = h.value
			continue
		}
		req.Header.Add(h.name, h.value)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return Exchange{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Exchange{}, fmt.Errorf("reading the body: %w", err)
	}
	return Exchange{Name: x.name, Request: x.line, Status: resp.StatusCode, Header: resp.Header, Body: string(body)}, nil
}

// leaks are what no response body may hold unless it is expected: a stack
// trace or handler source.
var leaks = []string{"goroutine ", "runtime/debug", "package main"}

// check compares the response received with the one x expects.
func (x exchange) check(got Exchange, forbid []string, trailingNewline bool, res *Result) {
	at := x.name + " " + x.line
	if got.Status != x.status {
		res.failf("%s: status %d, want %d; body %.300s", at, got.Status, x.status, got.Body)
	}
	for _, c := range x.want {
		values := got.Header.Values(c.name)
		g := strings.Join(values, ", ")
		switch {
		case c.absent && len(values) > 0:
			res.failf("%s: header %s = %q, want none", at, c.name, values)
		case c.absent:
		case c.re != nil && !c.re.MatchString(g):
			res.failf("%s: header %s = %q, does not match %s", at, c.name, g, c.re)
		case c.re == nil && g != c.value:
			res.failf("%s: header %s = %q, want %q", at, c.name, g, c.value)
		}
	}
	switch {
	case x.bodyRe != nil:
		if !x.bodyRe.MatchString(got.Body) {
			res.failf("%s: body %q does not match %s", at, got.Body, x.bodyRe)
		}
	case got.Body != x.rawBody && !(trailingNewline && got.Body == x.rawBody+"\n"):
		res.failf("%s: body\n  %q\nwant\n  %q", at, got.Body, x.rawBody)
	}
	for _, leak := range append(leaks[:len(leaks):len(leaks)], forbid...) {
		if strings.Contains(got.Body, leak) && !strings.Contains(x.rawBody, leak) {
			res.failf("%s: body leaks %q: %.300s", at, leak, got.Body)
		}
	}
}
