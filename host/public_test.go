package host_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/host/hosttest"
	"github.com/zealgo/zealgo/internal/testutil"
)

// TestPublicGolden runs every archive under testdata/public, as TestGolden
// does, with static files' trailing newlines allowed.
func TestPublicGolden(t *testing.T) {
	hosttest.RunDir(t, "testdata/public", hosttest.WithApp(newGoldenApp), hosttest.WithTrailingNewline(), hosttest.Parallel())
}

const pageHead = "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n"

// fetch fetches url (without following redirects) with the given headers
// ("Name: value"), returning the response and its body.
func fetch(t *testing.T, url string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestPublicStaticCaching: Last-Modified and If-Modified-Since, ETag and
// If-None-Match, Range and If-Range on a static file.
func TestPublicStaticCaching(t *testing.T) {
	data := strings.Repeat("0123456789abcdef", 256) // 4 KiB
	ta := newTestApp(t, map[string]string{"public/js/app.js": data})
	mtime := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(ta.root, "public/js/app.js"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	url := ta.srv.URL + "/js/app.js"
	resp, body := fetch(t, url)
	if resp.StatusCode != 200 || body != data {
		t.Fatalf("GET: %d, %d bytes", resp.StatusCode, len(body))
	}
	lm := resp.Header.Get("Last-Modified")
	if lm != mtime.Format(http.TimeFormat) {
		t.Errorf("Last-Modified = %q, want %q", lm, mtime.Format(http.TimeFormat))
	}
	tag := resp.Header.Get("ETag")
	if !regexp.MustCompile(`^"[0-9a-f]+-1000"$`).MatchString(tag) {
		t.Errorf("ETag = %q, want a strong tag ending in the size", tag)
	}
	if resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Errorf("Accept-Ranges = %q", resp.Header.Get("Accept-Ranges"))
	}
	for _, tc := range []struct {
		name    string
		headers []string
		status  int
		body    string
		header  map[string]string
	}{
		{"if-modified-since same", []string{"If-Modified-Since: " + lm}, 304, "", nil},
		{"if-modified-since later", []string{"If-Modified-Since: " + mtime.Add(time.Hour).Format(http.TimeFormat)}, 304, "", nil},
		{"if-modified-since earlier", []string{"If-Modified-Since: " + mtime.Add(-time.Hour).Format(http.TimeFormat)}, 200, data, nil},
		{"if-none-match", []string{"If-None-Match: " + tag}, 304, "", map[string]string{"ETag": tag}},
		{"if-none-match other", []string{`If-None-Match: "other"`}, 200, data, nil},
		{"range", []string{"Range: bytes=16-31"}, 206, data[16:32], map[string]string{"Content-Range": "bytes 16-31/4096"}},
		{"range suffix", []string{"Range: bytes=-4"}, 206, data[4092:], nil},
		{"if-range current", []string{"Range: bytes=0-3", "If-Range: " + tag}, 206, data[:4], nil},
		{"if-range stale", []string{"Range: bytes=0-3", `If-Range: "stale"`}, 200, data, nil},
		{"range unsatisfiable", []string{"Range: bytes=9000-9001"}, 416, "", map[string]string{"Content-Range": "bytes */4096"}},
	} {
		resp, body := fetch(t, url, tc.headers...)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
		if tc.status != 416 && body != tc.body {
			t.Errorf("%s: body %d bytes, want %d", tc.name, len(body), len(tc.body))
		}
		for k, v := range tc.header {
			if g := resp.Header.Get(k); g != v {
				t.Errorf("%s: %s = %q, want %q", tc.name, k, g, v)
			}
		}
	}
	// A change on disk changes both validators.
	if err := os.WriteFile(filepath.Join(ta.root, "public/js/app.js"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, body = fetch(t, url, "If-None-Match: "+tag)
	if resp.StatusCode != 200 || body != "changed" || resp.Header.Get("ETag") == tag {
		t.Errorf("after a change: %d %q ETag %q", resp.StatusCode, body, resp.Header.Get("ETag"))
	}
}

// TestPublicSymlinks: no symlink serves a file outside public/, a .go file
// or a dotfile; a symlink to an ordinary file inside public/ is served.
func TestPublicSymlinks(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"public/about.go":      pageHead + "// SECRET-SOURCE\nvar about = func(api *host.API) string { return \"about\" }\n",
		"public/real.txt":      "real text",
		"public/.env":          "SECRET=1",
		"public/sub/page.html": "<p>sub</p>",
		"api/users.go":         pageHead + "// SECRET-SOURCE\nvar users = func(api *host.API) string { return \"u\" }\n",
		"secret.txt":           "SECRET outside public",
	})
	pub := filepath.Join(ta.root, "public")
	links := map[string]string{
		"out.txt":    filepath.Join(ta.root, "secret.txt"),   // a file outside public/
		"rel.txt":    "../secret.txt",                        // the same, relative
		"apidir":     filepath.Join(ta.root, "api"),          // a directory outside public/
		"source.txt": "about.go",                             // a page's source under another name
		"apisrc.txt": filepath.Join(ta.root, "api/users.go"), // an API file's source
		"env.txt":    ".env",                                 // a dotfile
		"etc":        "/etc",                                 // the system
		"alias.txt":  "real.txt",                             // fine: inside, ordinary
		"subdir":     "sub",                                  // fine: a directory inside
		"about2.go":  "about.go",                             // a page through a symlink: never shows source
		"loop.txt":   "loop.txt",                             // a loop
		"dangling":   "nowhere.txt",                          // a missing target
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(pub, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/out.txt", 404, ""},
		{"/rel.txt", 404, ""},
		{"/apidir/users.go", 404, ""},
		{"/apidir/users", 404, ""},
		{"/source.txt", 404, ""},
		{"/apisrc.txt", 404, ""},
		{"/env.txt", 404, ""},
		{"/etc/passwd", 404, ""},
		{"/etc/hostname", 404, ""},
		{"/loop.txt", 404, ""},
		{"/dangling", 404, ""},
		{"/alias.txt", 200, "real text"},
		{"/subdir/page.html", 200, "<p>sub</p>"},
		{"/about2", 404, ""}, // runs public/about2.go, which has no func named about2
		{"/about2.go", 404, ""},
	} {
		resp, body := fetch(t, ta.srv.URL+tc.path)
		if resp.StatusCode != tc.status || tc.body != "" && body != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.path, resp.StatusCode, body, tc.status, tc.body)
		}
		for _, leak := range []string{"SECRET", "package main", "root:"} {
			if strings.Contains(body, leak) {
				t.Errorf("%s: body leaks %q", tc.path, leak)
			}
		}
	}
	// A page file that is a symlink out of public/ is not run either.
	if err := os.Symlink(filepath.Join(ta.root, "api/users.go"), filepath.Join(pub, "users.go")); err != nil {
		t.Fatal(err)
	}
	if resp, body := fetch(t, ta.srv.URL+"/users"); resp.StatusCode != 404 || strings.Contains(body, "SECRET") {
		t.Errorf("/users through a symlink out of public/: %d %q", resp.StatusCode, body)
	}
}

// TestPublicReload: a page changes, appears and disappears without a
// restart; a static file is read fresh on every request.
func TestPublicReload(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"public/about.go":  pageHead + "var about = func(api *host.API) string { return \"v1\" }\n",
		"public/style.css": "a{}",
	})
	page := func(path string) (int, string) {
		resp, body := fetch(t, ta.srv.URL+path, "Accept: application/json")
		return resp.StatusCode, body
	}
	if c, b := page("/about"); c != 200 || b != "v1" {
		t.Fatalf("first: %d %q", c, b)
	}
	write := func(rel, data string) {
		if err := os.WriteFile(filepath.Join(ta.root, rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("public/about.go", pageHead+"var about = func(api *host.API) string { return \"v2\" }\n")
	testutil.WaitFor(t, 5*time.Second, "about v2", func() bool { _, b := page("/about"); return b == "v2" })
	write("public/new.go", pageHead+"var new = func(api *host.API) string { return \"new page\" }\n")
	if c, b := page("/new"); c != 200 || b != "new page" {
		t.Errorf("a new page: %d %q", c, b)
	}
	write("public/about.go", pageHead+"var about = func(api *host.API) string { return broken }\n")
	testutil.WaitFor(t, 5*time.Second, "about broken", func() bool { c, _ := page("/about"); return c == 500 })
	if err := os.Remove(filepath.Join(ta.root, "public/about.go")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "about gone", func() bool { c, _ := page("/about"); return c == 404 })
	write("public/style.css", "b{}")
	if c, b := page("/style.css"); c != 200 || b != "b{}" {
		t.Errorf("static after a change: %d %q", c, b)
	}
}

// TestPublicWhen: path-scoped middleware guards pages and static files
// below its prefix, on segment boundaries; OPTIONS is not blocked.
func TestPublicWhen(t *testing.T) {
	ta := newTestAppWith(t, map[string]string{
		"public/admin/index.go":       pageHead + "var index = func(api *host.API) string { return \"admin\" }\n",
		"public/admin/users.go":       pageHead + "var users = func(api *host.API) string { return \"users\" }\n",
		"public/admin/secret.txt":     "SECRET",
		"public/administrators.go":    pageHead + "var administrators = func(api *host.API) string { return \"open\" }\n",
		"public/shop/index.go":        pageHead + "var index = func(api *host.API) string { return \"shop\" }\n",
		"public/shop/css/shop.css":    "p{}",
		"public/unguarded/secret.txt": "free",
	}, func(a *host.App) {
		a.When("/admin", "deny")
		a.When("/shop", "tag:shop")
	})
	for _, tc := range []struct {
		method, path string
		status       int
		tag          string
	}{
		{"GET", "/admin/", 418, ""},
		{"GET", "/admin", 418, ""},
		{"GET", "/admin/users", 418, ""},
		{"POST", "/admin/users", 418, ""},
		{"GET", "/admin/secret.txt", 418, ""},
		{"GET", "/admin/missing", 418, ""},
		{"GET", "/%61dmin/users", 418, ""},
		{"OPTIONS", "/admin/users", 204, ""},
		{"GET", "/administrators", 200, ""},
		{"GET", "/unguarded/secret.txt", 200, ""},
		{"GET", "/shop/", 200, "shop"},
		{"GET", "/shop/css/shop.css", 200, "shop"},
	} {
		req, _ := http.NewRequest(tc.method, ta.srv.URL, nil)
		req.URL.Opaque = tc.path
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("X-Tag") != tc.tag {
			t.Errorf("%s %s: %d X-Tag %q, want %d %q; body %.80s", tc.method, tc.path, resp.StatusCode,
				resp.Header.Get("X-Tag"), tc.status, tc.tag, b)
		}
		if strings.Contains(string(b), "SECRET") {
			t.Errorf("%s %s: guarded file leaked", tc.method, tc.path)
		}
	}
}

// TestPublicInclude: a page includes another page file and gets its result
// under the contract; errors become a 500.
func TestPublicInclude(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"public/partials/nav.go":    pageHead + "var nav = func(api *host.API) string { return \"<nav>\" + api.String(\"who\") + \"</nav>\" }\n",
		"public/partials/data.go":   pageHead + "var data = func(api *host.API) any { return map[string]any{\"n\": 1} }\n",
		"public/partials/writes.go": pageHead + "var writes = func(api *host.API) any { api.Res.WriteString(\"[written]\"); return nil }\n",
		"public/index.go": pageHead + `var index = func(api *host.API) any {
	nav, _ := api.Include("/partials/nav").(string)
	return "<body>" + nav + "<main>home</main></body>"
}
`,
		"public/json.go":       pageHead + "var json = func(api *host.API) any { return api.Include(\"partials/data\") }\n",
		"public/writer.go":     pageHead + "var writer = func(api *host.API) any { api.Include(\"/partials/writes\"); api.Res.WriteString(\"[mine]\"); return nil }\n",
		"public/missing.go":    pageHead + "var missing = func(api *host.API) any { return api.Include(\"/partials/none\") }\n",
		"public/self.go":       pageHead + "var self = func(api *host.API) any { return api.Include(\"/self\") }\n",
		"public/bad.go":        pageHead + "var bad = func(api *host.API) any { return api.Include(\"../api/x\") }\n",
		"public/docs/index.go": pageHead + "var index = func(api *host.API) string { return \"docs\" }\n",
		"public/dir.go":        pageHead + "var dir = func(api *host.API) any { return api.Include(\"/docs/\") }\n",
		"api/page.go":          pageHead + "var page = func(api *host.API) any { return api.Include(\"/partials/data\") }\n",
	})
	for _, tc := range []struct {
		path, accept string
		status       int
		body         string
	}{
		{"/?who=ann", "", 200, "<body><nav>ann</nav><main>home</main></body>"},
		{"/json", "", 200, `{"n":1}`},
		{"/writer", "", 200, "[written][mine]"},
		{"/dir", "", 200, "docs"},
		{"/api/page", "", 200, `{"n":1}`},
		{"/missing", "application/json", 500, ""},
		{"/self", "application/json", 500, ""},
		{"/bad", "application/json", 500, ""},
	} {
		resp, body := fetch(t, ta.srv.URL+tc.path, "Accept: "+tc.accept)
		if resp.StatusCode != tc.status || tc.body != "" && body != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.path, resp.StatusCode, body, tc.status, tc.body)
		}
	}
	for _, want := range []string{`no page file public/partials/none.go`, `nested more than 8 deep`, `a page path holds only`} {
		if !strings.Contains(ta.logs.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// TestPublicSampleRepo serves the repository's own sample root: the home
// page, the about page and the stylesheet.
func TestPublicSampleRepo(t *testing.T) {
	ta := newTestApp(t, nil, host.WithRoot(".."), host.WithDataDir(t.TempDir()))
	for _, tc := range []struct{ path, ctype, contains string }{
		{"/", "text/html; charset=utf-8", `<link rel="stylesheet" href="/css/style.css">`},
		{"/about", "text/html; charset=utf-8", "<h1>About zealgo</h1>"},
		{"/css/style.css", "text/css; charset=utf-8", "font-family"},
	} {
		resp, body := fetch(t, ta.srv.URL+tc.path)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tc.ctype || !strings.Contains(body, tc.contains) {
			t.Errorf("%s: %d %q, body lacks %q:\n%.400s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.contains, body)
		}
	}
	if resp, _ := fetch(t, ta.srv.URL+"/index.go"); resp.StatusCode != 404 {
		t.Errorf("/index.go: %d", resp.StatusCode)
	}
}
