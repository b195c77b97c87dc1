package host_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// paramFile is a mode-1 handler file whose variable is name, answering
// what with its parameters.
func paramFile(name, what string) string {
	return checkHead + "var " + name + " = func(api *host.API) any {\n" +
		"\treturn map[string]any{\"file\": \"" + what + "\", \"slug\": api.Param(\"slug\"), \"id\": api.Param(\"id\"), \"path\": api.Param(\"path\")}\n}\n"
}

// TestRoutesParams: `zealgo routes` prints a parameter as {name} and a
// rest parameter as {name...}, under api/ and public/, with the mode-1
// variable named after the parameter.
func TestRoutesParams(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"api/articles/[slug].go":                paramFile("slug", "a"),
		"api/articles/feed.go":                  paramFile("feed", "f"),
		"api/articles/[slug]/comments/[id].go":  checkHead + "var get = func(api *host.API) any { return 1 }\n",
		"api/files/[...path].go":                paramFile("path", "p"),
		"public/users/[slug].go":                checkHead + "var slug = func(api *host.API) string { return api.Param(\"slug\") }\n",
		"public/blog/[slug]/index.go":           checkHead + "var index = func(api *host.API) string { return \"\" }\n",
		"public/index.go":                       checkHead + "var index = func(api *host.API) string { return \"\" }\n",
		"api/articles/[slug]/comments/index.go": checkHead + "var index = func(api *host.API) any { return 1 }\n",
	})
	out := runCommand(t, root, "routes")
	rows := map[string]string{} // URL -> methods | file | note
	for _, line := range strings.Split(out, "\n") {
		cols := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
		if len(cols) == 4 {
			rows[cols[0]] = strings.Join(cols[1:], " | ")
		}
	}
	for url, want := range map[string]string{
		"/api/articles/{slug}":                "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS | api/articles/[slug].go | mode 1 (slug)",
		"/api/articles/{slug}/comments/{id}":  "GET, HEAD, OPTIONS | api/articles/[slug]/comments/[id].go | mode 2 (per method)",
		"/api/articles/{slug}/comments/index": "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS | api/articles/[slug]/comments/index.go | mode 1 (index)",
		"/api/articles/feed":                  "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS | api/articles/feed.go | mode 1 (feed)",
		"/api/files/{path...}":                "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS | api/files/[...path].go | mode 1 (path)",
		"/blog/{slug}/":                       "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS | public/blog/[slug]/index.go | mode 1 (index)",
		"/users/{slug}":                       "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS | public/users/[slug].go | mode 1 (slug)",
		"/":                                   "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS | public/index.go | mode 1 (index)",
	} {
		if rows[url] != want {
			t.Errorf("%s: %q, want %q", url, rows[url], want)
		}
	}
	if len(rows) != 9 { // the header and 8 files
		t.Errorf("%d rows:\n%s", len(rows), out)
	}
}

// TestCheckRouteConflict: check names the level that holds two parameter
// names and exits 1; a parameter file beside a directory of the same
// parameter, and [name] beside [...rest], are no conflict.
func TestCheckRouteConflict(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"api/articles/[slug].go":         paramFile("slug", "a"),
		"api/articles/[slug]/x.go":       paramFile("x", "x"),
		"api/articles/[...path].go":      paramFile("path", "p"),
		"api/items/[id].go":              paramFile("id", "i"),
		"api/items/[slug]/show.go":       paramFile("show", "s"),
		"public/users/[name].go":         checkHead + "var name = func(api *host.API) string { return \"\" }\n",
		"public/users/[login]/[id].go":   checkHead + "var id = func(api *host.API) string { return \"\" }\n",
		"public/users/[login]/[...r].go": checkHead + "var r = func(api *host.API) string { return \"\" }\n",
	})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	out, errOut, code := runCheck(t, app)
	want := "api/items/[id].go: two route parameters at one level: api/items/[id].go and api/items/[slug]/; " +
		"a level holds one parameter name, so rename one of them\n" +
		"public/users/[login]: two route parameters at one level: public/users/[login]/ and public/users/[name].go; " +
		"a level holds one parameter name, so rename one of them\n"
	if code != 1 || out != want || !strings.Contains(errOut, "2 problem(s) in 8 file(s)") {
		t.Fatalf("exit %d:\n%s%s\nwant\n%s", code, out, errOut, want)
	}
}

// TestRouteParamsReload: a parameter file added while serving serves on
// the next request; an exact file added beside it takes its name over,
// and gives it back when removed (the route cache follows the files).
func TestRouteParamsReload(t *testing.T) {
	ta := newTestApp(t, map[string]string{"api/articles/feed.go": paramFile("feed", "feed")})
	url := ta.srv.URL + "/api/articles/"
	if code, body := get(t, url+"hello"); code != 404 || !strings.Contains(body, "method_not_found") {
		t.Fatalf("before: %d %s", code, body)
	}
	write := func(rel, src string) {
		p := filepath.Join(ta.root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("api/articles/[slug].go", paramFile("slug", "[slug]"))
	testutil.WaitFor(t, 10*time.Second, "the parameter file", func() bool {
		_, body := get(t, url+"hello")
		return body == `{"file":"[slug]","id":"","path":"","slug":"hello"}`
	})
	write("api/articles/hello.go", paramFile("hello", "hello"))
	testutil.WaitFor(t, 10*time.Second, "the exact file", func() bool {
		_, body := get(t, url+"hello")
		return strings.Contains(body, `"file":"hello"`)
	})
	if err := os.Remove(filepath.Join(ta.root, "api/articles/hello.go")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the parameter again", func() bool {
		_, body := get(t, url+"hello")
		return strings.Contains(body, `"file":"[slug]"`)
	})
	write("api/articles/[slug]/comments/[id].go", paramFile("id", "comment"))
	testutil.WaitFor(t, 10*time.Second, "a new parameter directory", func() bool {
		_, body := get(t, url+"hello/comments/3")
		return body == `{"file":"comment","id":"3","path":"","slug":"hello"}`
	})
	if code, body := get(t, url+"feed"); code != 200 || !strings.Contains(body, `"file":"feed"`) {
		t.Fatalf("feed: %d %s", code, body)
	}
}

// TestRouteParamsObserved: the metrics and the access log name the
// parameter file, not the values: one series for any number of values.
func TestRouteParamsObserved(t *testing.T) {
	ta := newTestApp(t, map[string]string{"api/articles/[slug].go": paramFile("slug", "a")},
		host.WithMetrics("127.0.0.1:0"), host.WithAccessLog(true))
	for _, v := range []string{"a", "b", "c.d", "zo%C3%AB"} {
		if code, _ := get(t, ta.srv.URL+"/api/articles/"+v); code != 200 {
			t.Fatalf("%s: %d", v, code)
		}
	}
	fams := scrape(t, ta.app)
	if n := metricValue(fams, "zealgo_http_requests_total", "code=200", "handler=api/articles/[slug].go", "method=GET"); n != 4 {
		t.Fatalf("requests of api/articles/[slug].go: %v, want 4", n)
	}
	if n := len(fams["zealgo_http_requests_total"].GetMetric()); n != 1 {
		t.Fatalf("%d request series, want 1", n)
	}
	testutil.WaitFor(t, 5*time.Second, "the access log", func() bool {
		return strings.Count(ta.logs.String(), "file=api/articles/[slug].go") == 4
	})
}

// BenchmarkRouteParam compares a request for a parameter file with one
// for an exact file whose handler is the same, on one application: the
// difference is what a parameter route costs per request (the route
// cache holds both, the parameter's value with the route).
func BenchmarkRouteParam(b *testing.B) {
	root := testutil.WriteTree(b, map[string]string{
		"api/bench/noop.go": benchNoopFile,
		"api/bench/[id].go": strings.Replace(benchNoopFile, "var noop", "var id", 1),
	})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	h, err := app.Handler()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { app.Close() })
	b.Run("static", func(b *testing.B) { benchServe(b, h, "/api/bench/noop") })
	b.Run("param", func(b *testing.B) { benchServe(b, h, "/api/bench/how-to-train") })
	// paired serves both in turn, so that a busy machine slows both
	// alike, and reports the ratio of their times (param/static).
	b.Run("paired", func(b *testing.B) {
		reqs := [2]*http.Request{httptest.NewRequest(http.MethodGet, "/api/bench/noop", nil),
			httptest.NewRequest(http.MethodGet, "/api/bench/how-to-train", nil)}
		w := &benchWriter{h: http.Header{}}
		var spent [2]time.Duration
		for i := 0; i < b.N; i++ {
			for k := range 2 {
				k = (k + i) % 2 // each goes first every other time
				w.reset()
				start := time.Now()
				h.ServeHTTP(w, reqs[k])
				spent[k] += time.Since(start)
				if w.status != 0 && w.status != http.StatusOK {
					b.Fatalf("%s: %d", reqs[k].URL, w.status)
				}
			}
		}
		b.ReportMetric(float64(spent[1])/float64(spent[0]), "param/static")
	})
}
