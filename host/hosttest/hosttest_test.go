package hosttest_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/host/hosttest"
)

// TestRunDirServeApp runs testdata/golden on the plain `zealgo serve`
// application, each archive writing its own files.
func TestRunDirServeApp(t *testing.T) {
	hosttest.RunDir(t, "testdata/golden", hosttest.WithTrailingNewline(), hosttest.Parallel())
}

// TestRunOwnApp runs an archive against an existing root with the
// application's own setup (the Example's greeter).
func TestRunOwnApp(t *testing.T) {
	hosttest.Run(t, "testdata/greeter.txtar", hosttest.WithApp(newGreeter), hosttest.WithRoot("testdata/greeter"))
}

// TestOwnAppMatters: the greeter archive fails on the plain serve
// application, which provides no URL, sets no header and knows no token.
func TestOwnAppMatters(t *testing.T) {
	res, err := hosttest.Check("testdata/greeter.txtar", hosttest.WithRoot("testdata/greeter"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`request GET /api/hello?name=Ada: header X-App = "", want "greeter"`,
		`request 3 GET /api/me: status 401, want 200`,
	} {
		if !slices.Contains(res.Failures, want) && !containsPrefix(res.Failures, want) {
			t.Errorf("failures lack %q: %q", want, res.Failures)
		}
	}
}

// TestRootUntouched: running against an existing root writes nothing into
// it (the data directory is a temporary one).
func TestRootUntouched(t *testing.T) {
	before := tree(t, "testdata/greeter")
	hosttest.Run(t, "testdata/greeter.txtar", hosttest.WithApp(newGreeter), hosttest.WithRoot("testdata/greeter"))
	if after := tree(t, "testdata/greeter"); !slices.Equal(before, after) {
		t.Errorf("root changed:\nbefore %q\nafter  %q", before, after)
	}
}

func tree(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		names = append(names, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// writeArchive writes an archive into a temporary file and returns its path.
func writeArchive(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.txtar")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const echoFile = `-- api/echo.go --
//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var echo = func(api *host.API) any {
	api.App().Logger().Info("echoed", "say", api.String("say"))
	api.Res.Header().Set("X-Say", api.String("say"))
	return api.String("say")
}
`

// TestCheckReportsMismatches: each way a response or the log can differ
// from the archive is one failure naming the exchange; the archive as
// written passes.
func TestCheckReportsMismatches(t *testing.T) {
	cases := []struct {
		name, sections, want string
	}{
		{"passes", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\nX-Say: hi\n!X-None\n\nhi\n-- log --\nechoed say=hi\n", ""},
		{"status", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n201\n\nhi\n", "request GET /api/echo?say=hi: status 200, want 201"},
		{"header", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\nX-Say: ho\n\nhi\n", `request GET /api/echo?say=hi: header X-Say = "hi", want "ho"`},
		{"header regexp", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\nX-Say: ~^h$\n\nhi\n", `header X-Say = "hi", does not match ^h$`},
		{"absent header", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\n!X-Say\n\nhi\n", `header X-Say = ["hi"], want none`},
		{"body", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\n\nho\n", "body\n  \"hi\"\nwant\n  \"ho\""},
		{"body regexp", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\n\n~^h$\n", `body "hi" does not match ^h$`},
		{"second exchange", "-- request --\nGET /api/echo?say=a\n\n-- response --\n200\n\na\n-- request 2 --\nGET /api/echo?say=b\n\n-- response 2 --\n200\n\na\n", "request 2 GET /api/echo?say=b: body"},
		{"forbid", "-- request --\nGET /api/echo?say=secret\n\n-- response --\n200\n\n~.\n-- forbid --\nsecret\n", `body leaks "secret"`},
		{"stack trace", "-- request --\nGET /api/echo?say=goroutine+1+[running]\n\n-- response --\n200\n\n~.\n", `body leaks "goroutine "`},
		{"log", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\n\nhi\n-- log --\nechoed say=ho\n", `log lacks "echoed say=ho"`},
		{"nolog", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\n\nhi\n-- nolog --\nechoed say=hi\n", `log has "echoed say=hi"`},
		{"capture json", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\ncapture v = json .a\n\nhi\n", "request GET /api/echo?say=hi: capture v = json .a: the body is not JSON"},
		{"capture json path", "-- request --\nGET /api/echo?say=%7B%22a%22:[1]%7D\n\n-- response --\n200\ncapture v = json .a.1\n\n~.\n", "capture v = json .a.1: the body has no .a.1 (an array of 1)"},
		{"capture header", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\ncapture v = header X-None\n\nhi\n", "capture v = header X-None: no header X-None"},
		{"capture header regexp", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\ncapture v = header X-Say ~^o\n\nhi\n", `capture v = header X-Say ~^o: header X-Say = "hi" does not match ^o`},
		{"capture body", "-- request --\nGET /api/echo?say=hi\n\n-- response --\n200\ncapture v = body ~^z(.)\n\nhi\n" +
			"-- request 2 --\nGET /api/echo?say={{v}}\n\n-- response 2 --\n200\n\n~.\n", `request GET /api/echo?say=hi: capture v = body ~^z(.): body "hi" does not match ^z(.)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := hosttest.Check(writeArchive(t, echoFile+c.sections))
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if len(res.Failures) > 0 {
					t.Errorf("failures %q, want none; log:\n%s", res.Failures, res.Log)
				}
				return
			}
			if len(res.Failures) != 1 || !strings.Contains(res.Failures[0], c.want) {
				t.Errorf("failures %q, want one holding %q", res.Failures, c.want)
			}
		})
	}
}

// TestCheckSendsAsWritten: the target is sent unescaped and uncleaned,
// headers and the body as given, redirects are not followed.
func TestCheckSendsAsWritten(t *testing.T) {
	p := writeArchive(t, `-- api/show.go --
//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var show = func(api *host.API) any {
	if api.String("go") != "" {
		api.Res.Header().Set("Location", "/elsewhere")
		return 303
	}
	r := api.Req.Parent
	return map[string]any{"uri": r.RequestURI, "host": r.Host, "type": r.Header.Get("Content-Type"), "input": api.Input}
}
-- request --
POST /api/show?q=a%2Fb
Host: shop.example
Content-Type: application/x-www-form-urlencoded

name=ada
-- response --
200

{"host":"shop.example","input":{"name":"ada","q":"a/b"},"type":"application/x-www-form-urlencoded","uri":"/api/show?q=a%2Fb"}
-- request 2 --
GET /api/show?go=1

-- response 2 --
303
Location: /elsewhere

`)
	res, err := hosttest.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 || len(res.Exchanges) != 2 {
		t.Errorf("exchanges %d, failures %q; log:\n%s", len(res.Exchanges), res.Failures, res.Log)
	}
}

const visitsFile = `-- api/visits.go --
//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var visits = func(api *host.API) any {
	n, _ := api.G().Session.Int64("visits")
	api.G().Session.Set("visits", n+1)
	return map[string]any{"visits": n + 1}
}
-- request --
GET /api/visits

-- response --
200

{"visits":1}
-- request 2 --
GET /api/visits

-- response 2 --
200

{"visits":2}
`

// TestCookies: the second request continues the session only with the
// config "cookies".
func TestCookies(t *testing.T) {
	res, err := hosttest.Check(writeArchive(t, visitsFile+"-- config --\ncookies\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Errorf("with cookies: %q", res.Failures)
	}
	res, err = hosttest.Check(writeArchive(t, visitsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0], `"{\"visits\":1}"`) {
		t.Errorf("without cookies: failures %q, want the second visit counted as the first", res.Failures)
	}
}

// TestDev: the config "dev" shows the source lines of a page that fails
// to compile.
func TestDev(t *testing.T) {
	const archive = "-- public/broken.go --\npackage main\n\n// a\n// b\n// c\n// d\n// e\n\nvar broken = func() any { return undefinedName }\n" +
		"-- request --\nGET /broken\n\n-- response --\n500\n\n~class=\"hot\"\n"
	res, err := hosttest.Check(writeArchive(t, archive+"-- config --\ndev\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Errorf("dev: %q", res.Failures)
	}
	res, err = hosttest.Check(writeArchive(t, archive))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0], "does not match") {
		t.Errorf("not dev: failures %q, want the page without the source", res.Failures)
	}
}

// TestTrailingNewline: a static file's newline fails an exact body unless
// WithTrailingNewline accepts it.
func TestTrailingNewline(t *testing.T) {
	p := writeArchive(t, "-- public/a.txt --\nA\n-- request --\nGET /a.txt\n\n-- response --\n200\n\nA\n")
	res, err := hosttest.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0], "body") {
		t.Errorf("exact: failures %q, want one on the body", res.Failures)
	}
	if res, err = hosttest.Check(p, hosttest.WithTrailingNewline()); err != nil || len(res.Failures) > 0 {
		t.Errorf("WithTrailingNewline: %v %q", err, res.Failures)
	}
}

// TestWithOptions: host options reach the application; hosttest's root
// and log stay.
func TestWithOptions(t *testing.T) {
	p := writeArchive(t, `-- api/dev.go --
//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var dev = func(app *host.App) any { return map[string]any{"dev": app.Config().Dev, "body": app.Config().MaxBodyBytes} }
-- request --
GET /api/dev

-- response --
200

{"body":10,"dev":true}
`)
	res, err := hosttest.Check(p, hosttest.WithOptions(host.WithDev(true), host.WithConfig(func(c *host.Config) { c.MaxBodyBytes = 10 })))
	if err != nil || len(res.Failures) > 0 {
		t.Errorf("%v %q", err, res.Failures)
	}
}

// TestCheckArchiveErrors: an archive that breaks the format, or an
// application that does not start, is an error before any request.
func TestCheckArchiveErrors(t *testing.T) {
	const ok = "-- request --\nGET /\n\n-- response --\n404\n\n~.\n"
	cases := []struct {
		name, archive, want string
		opts                []hosttest.Option
	}{
		{"no request", "-- api/a.go --\npackage main\n", "no request section", nil},
		{"no response", "-- request --\nGET /\n\n", `"request" or "response" is missing`, nil},
		{"gap", ok + "-- request 3 --\nGET /\n\n-- response 3 --\n200\n", `"request 2" or "response 2" is missing`, nil},
		{"section name", ok + "-- request2 --\nGET /\n", `section "request2"`, nil},
		{"section one", ok + "-- request 1 --\nGET /\n", `section "request 1"`, nil},
		{"twice", ok + "-- log --\na\n-- log --\nb\n", `section "log" appears twice`, nil},
		{"config", ok + "-- config --\nfast\n", `unknown config "fast"`, nil},
		{"dotdot", ok + "-- ../x.go --\nx\n", `file "../x.go"`, nil},
		{"absolute", ok + "-- /tmp/x.go --\nx\n", `file "/tmp/x.go"`, nil},
		{"first line", "-- request --\n/api/x\n\n-- response --\n200\n", `first line "/api/x"`, nil},
		{"request header", "-- request --\nGET /\nnocolon\n\n-- response --\n200\n", `header line "nocolon"`, nil},
		{"status", "-- request --\nGET /\n\n-- response --\nok\n", `first line "ok": want a status code`, nil},
		{"header regexp", "-- request --\nGET /\n\n-- response --\n200\nX-A: ~(\n", "header X-A", nil},
		{"body regexp", "-- request --\nGET /\n\n-- response --\n200\n\n~(\n", "body: error parsing regexp", nil},
		{"unknown variable", "-- request --\nGET /\nAuthorization: Bearer {{tokn}}\n\n-- response --\n200\n", `request: line "Authorization: Bearer {{tokn}}": unknown variable {{tokn}}`, nil},
		{"variable of its own response", "-- request --\nGET /?t={{t}}\n\n-- response --\n200\ncapture t = body ~.\n", `request: line "GET /?t={{t}}": unknown variable {{t}}`, nil},
		{"variable in a body", ok + "-- request 2 --\nPOST /\n\n{\"id\":{{id}}}\n-- response 2 --\n200\n", `request 2: body: unknown variable {{id}}`, nil},
		{"capture line", "-- request --\nGET /\n\n-- response --\n200\ncapture token json .a\n", `response: line "capture token json .a": want "capture NAME = json .path"`, nil},
		{"capture json path", "-- request --\nGET /\n\n-- response --\n200\ncapture t = json user.token\n", "want a JSON path such as .user.token", nil},
		{"capture regexp", "-- request --\nGET /\n\n-- response --\n200\ncapture t = body ~(\n", `line "capture t = body ~(": error parsing regexp`, nil},
		{"capture without ~", "-- request --\nGET /\n\n-- response --\n200\ncapture t = body x\n", "want a regular expression starting with ~", nil},
		{"files and root", "-- api/a.go --\nx\n" + ok, "holds files, but WithRoot fixes the root", []hosttest.Option{hosttest.WithRoot("testdata/greeter")}},
		{"start", ok, "boom", []hosttest.Option{hosttest.WithApp(func() *host.App {
			app := hosttest.ServeApp()
			app.OnStart(func(*host.App) error { return errors.New("boom") })
			return app
		})}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := hosttest.Check(writeArchive(t, c.archive), c.opts...)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "zealgo: hosttest: ") {
				t.Errorf("error %v, want one holding %q", err, c.want)
			}
		})
	}
	if _, err := hosttest.Check(filepath.Join(t.TempDir(), "missing.txtar")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing archive: %v", err)
	}
}

// showFile answers the request's query, its header X-C and its body.
const showFile = `-- api/show.go --
//go:build ignore

package main

import (
	"io"

	"github.com/zealgo/zealgo/host"
)

var show = func(api *host.API) any {
	r := api.Req.Parent
	b, _ := io.ReadAll(r.Body)
	return map[string]any{"query": r.URL.RawQuery[2:], "header": r.Header.Get("X-C"), "body": string(b)}
}
`

// TestCaptures: values captured from a response (a JSON path, a header, a
// header's or the body's regular expression) replace their {{NAME}} in
// the target, the headers and the body of the later requests; a value
// captured again replaces the first.
func TestCaptures(t *testing.T) {
	p := writeArchive(t, echoFile+showFile+`-- request --
GET /api/echo?say=%7B%22a%22:[1,%7B%22b%22:%22c%22%7D,true]%7D

-- response --
200
capture b = json .a.1.b
capture n = json .a.0
capture obj = json .a.1
capture yes = json .a.2
capture all = header X-Say ~^\{"(a)"
capture say = header X-Say

~.
-- request 2 --
POST /api/show?q={{b}}{{n}}{{yes}}{{all}}
X-{{b}}: {{obj}}

{{say}}
-- response 2 --
200
capture b = body ~"query":"(c)1

{"body":"{\"a\":[1,{\"b\":\"c\"},true]}","header":"{\"b\":\"c\"}","query":"c1truea"}
-- request 3 --
GET /api/echo?say={{b}}{{b}}

-- response 3 --
200

cc
`)
	res, err := hosttest.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 || len(res.Exchanges) != 3 {
		t.Fatalf("exchanges %d, failures %q; log:\n%s", len(res.Exchanges), res.Failures, res.Log)
	}
	if got := res.Exchanges[1].Request; got != "POST /api/show?q={{b}}{{n}}{{yes}}{{all}}" {
		t.Errorf("Request %q, want the line as written", got)
	}
}
