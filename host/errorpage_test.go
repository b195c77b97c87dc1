package host_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// TestErrorPageCustom: ErrorPage replaces the HTML page of one status, or
// of every status with 0; the handler sees the error through PageError and
// may change the status; JSON clients and /api/ keep the envelope.
func TestErrorPageCustom(t *testing.T) {
	ta := newTestAppWith(t, map[string]string{
		"public/boom.go":   pageHead + "var boom = func(api *host.API) any { var m map[string]int; m[\"x\"] = 1; return m }\n",
		"public/gone.go":   pageHead + "var gone = func(api *host.API) int { return 410 }\n",
		"public/teapot.go": pageHead + "var teapot = func(api *host.API) int { return 418 }\n",
	}, func(a *host.App) {
		a.ErrorPage(http.StatusNotFound, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e := host.PageError(r)
			fmt.Fprintf(w, "<h1>lost: %s</h1><p>%s</p>", e.Code, r.URL.Path)
		}))
		a.ErrorPage(0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintf(w, "any error %d", host.PageError(r).Status)
		}))
		a.ErrorPage(http.StatusGone, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound) // hide that it existed
			fmt.Fprint(w, "never was")
		}))
		a.ErrorPage(http.StatusTeapot, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	})
	for _, tc := range []struct {
		path, accept string
		status       int
		ctype, body  string
	}{
		{"/nowhere", "text/html", 404, "text/html; charset=utf-8", "<h1>lost: not_found</h1><p>/nowhere</p>"},
		{"/nowhere", "application/json", 404, "application/json", `{"error":"not_found","hint":"nothing is served at /nowhere"}`},
		{"/boom", "text/html", 500, "text/plain; charset=utf-8", "any error 500"},
		{"/gone", "text/html", 404, "text/html; charset=utf-8", "never was"},
		{"/teapot", "text/html", 418, "text/html; charset=utf-8", ""},
		{"/api/nowhere", "text/html", 404, "application/json", `{"error":"method_not_found","hint":"no handler file for /api/nowhere"}`},
	} {
		resp, body := fetch(t, ta.srv.URL+tc.path, "Accept: "+tc.accept)
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.ctype || body != tc.body {
			t.Errorf("%s (%s): %d %q %q, want %d %q %q", tc.path, tc.accept, resp.StatusCode,
				resp.Header.Get("Content-Type"), body, tc.status, tc.ctype, tc.body)
		}
	}
}

// TestErrorPageTemplate: ErrorTemplate renders template/<name>.html with
// the error; a failing template falls back to the built-in page.
func TestErrorPageTemplate(t *testing.T) {
	ta := newTestAppWith(t, map[string]string{
		"template/errors/404.html": `<h1>{{.Status}} {{.Title}}</h1><p>{{.Path}} ({{.Code}}) {{.RequestID}}</p>`,
		"template/errors/500.html": `{{template "missing" .}}`,
		"public/boom.go":           pageHead + "var boom = func(api *host.API) (any, error) { return nil, host.NewError(500, \"boom\", \"went boom\") }\n",
	}, func(a *host.App) {
		a.ErrorTemplate(404, "errors/404")
		a.ErrorTemplate(500, "errors/500")
	})
	resp, body := fetch(t, ta.srv.URL+"/a<b>", "X-Request-Id: req-1")
	if resp.StatusCode != 404 || body != "<h1>404 Not Found</h1><p>/a&lt;b&gt; (not_found) req-1</p>" {
		t.Errorf("404 template: %d %q", resp.StatusCode, body)
	}
	resp, body = fetch(t, ta.srv.URL+"/boom")
	if resp.StatusCode != 500 || !strings.Contains(body, "<h1>500 Internal Server Error</h1>") || !strings.Contains(body, "went boom") {
		t.Errorf("broken 500 template: %d %q", resp.StatusCode, body)
	}
	if !strings.Contains(ta.logs.String(), "error page template failed") {
		t.Error("the failing error template was not logged")
	}
}

// TestErrorPageCompileModes: the same broken page shows its source only in
// dev mode; the log has file:line:col in both.
func TestErrorPageCompileModes(t *testing.T) {
	files := map[string]string{
		"public/broken.go": pageHead + "// SOURCE-LINE\nvar broken = func(api *host.API) any {\n\treturn api.Methd()\n}\n",
	}
	for _, dev := range []bool{false, true} {
		ta := newTestApp(t, files, host.WithDev(dev))
		resp, body := fetch(t, ta.srv.URL+"/broken", "Accept: text/html")
		shows := strings.Contains(body, "public/broken.go:9:9") && strings.Contains(body, "SOURCE-LINE") &&
			strings.Contains(body, "return api.Methd()") && strings.Contains(body, "did you mean Method?")
		if resp.StatusCode != 404 || shows != dev {
			t.Errorf("dev=%v: %d, source shown %v:\n%s", dev, resp.StatusCode, shows, body)
		}
		if !dev && (strings.Contains(body, "Methd") || strings.Contains(body, "broken.go")) {
			t.Errorf("default mode leaks the error: %s", body)
		}
		if !strings.Contains(ta.logs.String(), "public/broken.go:9:9") {
			t.Errorf("dev=%v: the log lacks file:line:col", dev)
		}
	}
}

// TestErrorPageEcho: errors Echo raises itself follow the same rule: an
// HTML page outside /api/, JSON under it.
func TestErrorPageEcho(t *testing.T) {
	ta := newTestApp(t, map[string]string{"public/index.go": pageHead + "var index = func(api *host.API) string { return \"home\" }\n"})
	for _, tc := range []struct{ path, ctype string }{
		{"/", "text/html; charset=utf-8"},
		{"/api/x", "application/json"},
	} {
		req, _ := http.NewRequest("BREW", ta.srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("BREW %s: %d %q, want 405 %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.ctype)
		}
	}
}

// TestErrorPageLinksHome: the built-in 404 and 500 pages link to the
// home page.
func TestErrorPageLinksHome(t *testing.T) {
	ta := newTestAppWith(t, map[string]string{
		"public/boom.go": pageHead + "var boom = func(api *host.API) (any, error) { return nil, host.NewError(500, \"boom\", \"went boom\") }\n",
	}, nil)
	for _, tc := range []struct {
		path   string
		status int
	}{{"/nowhere", 404}, {"/boom", 500}} {
		resp, body := fetch(t, ta.srv.URL+tc.path, "Accept: text/html")
		if resp.StatusCode != tc.status || !strings.Contains(body, `<a href="/">Go to the home page</a>`) {
			t.Errorf("%s: %d, want %d with a link home:\n%s", tc.path, resp.StatusCode, tc.status, body)
		}
	}
}
