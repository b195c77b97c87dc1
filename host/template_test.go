package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

const (
	tplLayout = `<html><title>{{.Title}}</title><body>{{block "content" .}}default{{end}}</body></html>`
	tplHome   = `{{template "layout" .}}{{define "content"}}<h1>{{.Title}}</h1><p>{{.Body}}</p>{{template "partials/foot"}}{{end}}`
	tplFoot   = `<footer>foot</footer>`
)

// TestTemplateRender: pages and API handlers render template/<name>.html
// with html/template (layouts, nested names, escaping); failures are a 500
// with nothing partial sent.
func TestTemplateRender(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"template/layout.html":        tplLayout,
		"template/home.html":          tplHome,
		"template/partials/foot.html": tplFoot,
		"template/plain.html":         `<a href="{{.URL}}" title="{{.T}}">{{.T}}</a><script>var x = {{.T}};</script>`,
		"template/broken.html":        `{{if}}`,
		"template/execfail.html":      `<p>before</p>{{template "nope" .}}`,
		"public/index.go": pageHead + `var index = func(app *host.App) any {
	return app.Render("home", map[string]any{"Title": "Home", "Body": "<script>alert(1)</script>"})
}
`,
		"public/plain.go": pageHead + `var plain = func(api *host.API) any {
	return api.App().Render("plain", map[string]any{"URL": "javascript:alert(1)", "T": "a\"b"})
}
`,
		"public/missing.go":  pageHead + "var missing = func(app *host.App) any { return app.Render(\"nothere\", nil) }\n",
		"public/broken.go":   pageHead + "var broken = func(app *host.App) any { return app.Render(\"broken\", nil) }\n",
		"public/execfail.go": pageHead + "var execfail = func(app *host.App) any { return app.Render(\"execfail\", nil) }\n",
		"public/badname.go":  pageHead + "var badname = func(app *host.App) any { return app.Render(\"../public/index\", nil) }\n",
		"public/suffix.go":   pageHead + "var suffix = func(app *host.App) any { return app.Render(\"/partials/foot.html\", nil) }\n",
		"public/pair.go": pageHead + `var pair = func(app *host.App) (string, error) {
	return app.RenderHTML("partials/foot", nil)
}
`,
		"api/page.go": pageHead + "var page = func(app *host.App) any { return app.Render(\"home\", map[string]any{\"Title\": \"API\"}) }\n",
	})
	for _, tc := range []struct {
		path, accept string
		status       int
		body         string
		ctype        string
	}{
		{"/", "", 200, `<html><title>Home</title><body><h1>Home</h1><p>&lt;script&gt;alert(1)&lt;/script&gt;</p><footer>foot</footer></body></html>`, "text/html; charset=utf-8"},
		{"/plain", "", 200, `<a href="#ZgotmplZ" title="a&#34;b">a&#34;b</a><script>var x = "a\"b";</script>`, "text/html; charset=utf-8"},
		{"/api/page", "", 200, `<html><title>API</title><body><h1>API</h1><p></p><footer>foot</footer></body></html>`, "text/html; charset=utf-8"},
		{"/suffix", "", 200, tplFoot, "text/html; charset=utf-8"},
		{"/pair", "", 200, tplFoot, "text/html; charset=utf-8"},
		{"/missing", "application/json", 500, "", "application/json"},
		{"/broken", "application/json", 500, "", "application/json"},
		{"/execfail", "application/json", 500, "", "application/json"},
		{"/badname", "application/json", 500, "", "application/json"},
	} {
		resp, body := fetch(t, ta.srv.URL+tc.path, "Accept: "+tc.accept)
		if resp.StatusCode != tc.status || tc.body != "" && body != tc.body || resp.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("%s: %d %q %q, want %d %q %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body,
				tc.status, tc.ctype, tc.body)
		}
		if strings.Contains(body, "before") {
			t.Errorf("%s: a failed template sent part of its output", tc.path)
		}
	}
	for _, want := range []string{`no template \"nothere\" (template/nothere.html)`, `template/broken.html`,
		`no such template \"nope\"`, `template name \"../public/index\"`} {
		if !strings.Contains(ta.logs.String(), want) {
			t.Errorf("log lacks %s", want)
		}
	}
	// Compiled code renders too.
	if html, err := ta.app.RenderHTML("partials/foot", nil); err != nil || html != tplFoot {
		t.Errorf("RenderHTML = %q, %v", html, err)
	}
	if v, ok := ta.app.Render("nothere", nil).(error); !ok || !strings.Contains(v.Error(), "zealgo: no template") {
		t.Errorf("Render of a missing template = %v, want an error", v)
	}
}

// TestTemplateReload: a changed template, a changed layout it uses, a new
// template in a new directory and a removed template are seen without a
// restart.
func TestTemplateReload(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"template/layout.html": tplLayout,
		"template/home.html":   `{{template "layout" .}}{{define "content"}}v1{{end}}`,
		"public/index.go":      pageHead + "var index = func(app *host.App) any { return app.Render(\"home\", map[string]any{\"Title\": \"T\"}) }\n",
		"public/other.go":      pageHead + "var other = func(api *host.API, app *host.App) any { return app.Render(api.String(\"n\"), nil) }\n",
	})
	page := func(path string) string {
		resp, body := fetch(t, ta.srv.URL+path, "Accept: application/json")
		if resp.StatusCode != 200 {
			return resp.Status
		}
		return body
	}
	write := func(rel, data string) {
		p := filepath.Join(ta.root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := page("/"); got != "<html><title>T</title><body>v1</body></html>" {
		t.Fatalf("first render: %q", got)
	}
	write("template/home.html", `{{template "layout" .}}{{define "content"}}v2{{end}}`)
	testutil.WaitFor(t, 5*time.Second, "home v2", func() bool { return page("/") == "<html><title>T</title><body>v2</body></html>" })
	write("template/layout.html", `<main>{{block "content" .}}{{end}}</main>`)
	testutil.WaitFor(t, 5*time.Second, "the new layout", func() bool { return page("/") == "<main>v2</main>" })
	write("template/errors/gone.html", `gone page`)
	testutil.WaitFor(t, 5*time.Second, "a template in a new directory", func() bool { return page("/other?n=errors/gone") == "gone page" })
	write("template/errors/gone.html", `gone page 2`)
	testutil.WaitFor(t, 5*time.Second, "a change in the new directory", func() bool { return page("/other?n=errors/gone") == "gone page 2" })
	if err := os.Remove(filepath.Join(ta.root, "template/home.html")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "home removed", func() bool { return page("/") == "500 Internal Server Error" })
}

// TestTemplateNoDirectory: without template/, Render is an error until the
// directory appears.
func TestTemplateNoDirectory(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"public/index.go": pageHead + "var index = func(app *host.App) any { return app.Render(\"home\", nil) }\n",
	})
	if resp, _ := fetch(t, ta.srv.URL+"/"); resp.StatusCode != 500 {
		t.Fatalf("no template dir: %d", resp.StatusCode)
	}
	if err := os.MkdirAll(filepath.Join(ta.root, "template"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ta.root, "template/home.html"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp, body := fetch(t, ta.srv.URL+"/"); resp.StatusCode != 200 || body != "hello" {
		t.Errorf("after template/ appeared: %d %q", resp.StatusCode, body)
	}
}
