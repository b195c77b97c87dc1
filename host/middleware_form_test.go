package host_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// TestMiddlewareSeesFormFields: middleware, and an auth callback it calls
// with host.RequestContextOf(r), read the form fields of the body in Post, and the
// handler still reads the whole body: its Input, Req.Post, Req.Body and
// G().Post are those of the request as sent. Bodies over MaxBodyBytes,
// read ahead or not, still get the handler's 413, and body-limit inside
// still counts the whole body.
func TestMiddlewareSeesFormFields(t *testing.T) {
	formBody := `return map[string]any{"x": api.String("x"), "post": api.Req.Post.Get("x"), "g": api.G().Post.Get("x"),
		"n": len(api.Req.Body()), "auth": api.IsAuthenticated(), "json": api.String("j")}`
	tokenOK := func(g *host.RequestContext) bool { return g.Post.Get("token") == "t0k" }
	ta := newTestAppWith(t, map[string]string{
		"api/form.go":         handlerFile("form", formBody, "tag:file"),
		"api/limited/form.go": handlerFile("form", formBody),
	}, func(a *host.App) {
		a.AuthChecker(tokenOK)
		a.Use(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				g := host.RequestContextOf(r)
				w.Header().Set("X-Mw-Post", g.Post.Encode())
				w.Header().Set("X-Mw-Auth", strconv.FormatBool(tokenOK(host.RequestContextOf(r))))
				next.ServeHTTP(w, r)
			})
		})
		a.When("/api/limited", "body-limit:40")
	}, host.WithConfig(func(c *host.Config) { c.MaxBodyBytes = 1000 }))

	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	_ = mw.WriteField("x", "from multipart")
	_ = mw.WriteField("token", "t0k")
	fw, _ := mw.CreateFormFile("up", "a.txt")
	_, _ = fw.Write([]byte("file content, not a field"))
	_ = mw.Close()
	mpBody := mp.String()

	form := "x=hello+there&token=t0k"
	chunked := func(s string) io.Reader { return io.MultiReader(strings.NewReader(s)) } // no Content-Length
	cases := []struct {
		name, method, path string
		body               io.Reader
		ctype              string
		status             int
		mwPost, mwAuth     string
		want               []string
	}{
		{"urlencoded POST", "POST", "/api/form?x=query", strings.NewReader(form), "application/x-www-form-urlencoded", 200,
			"token=t0k&x=hello+there", "true", []string{`"x":"hello there"`, `"post":"hello there"`, `"g":"hello there"`,
				`"n":` + strconv.Itoa(len(form)), `"auth":true`}},
		{"urlencoded POST, chunked", "POST", "/api/form", chunked(form), "application/x-www-form-urlencoded", 200,
			"token=t0k&x=hello+there", "true", []string{`"x":"hello there"`, `"post":"hello there"`, `"n":` + strconv.Itoa(len(form))}},
		{"multipart POST", "POST", "/api/form", strings.NewReader(mpBody), mw.FormDataContentType(), 200,
			"token=t0k&x=from+multipart", "true", []string{`"x":"from multipart"`, `"post":"from multipart"`, `"g":"from multipart"`,
				`"n":` + strconv.Itoa(len(mpBody)), `"auth":true`}},
		{"PUT", "PUT", "/api/form", strings.NewReader("x=put"), "application/x-www-form-urlencoded", 200,
			"x=put", "false", []string{`"x":"put"`, `"post":"put"`, `"auth":false`}},
		{"GET: the query is no form", "GET", "/api/form?x=q&token=t0k", nil, "", 200,
			"", "false", []string{`"x":"q"`, `"post":""`, `"auth":false`}},
		{"JSON is no form", "POST", "/api/form", strings.NewReader(`{"j":"son","token":"t0k"}`), "application/json", 200,
			"", "false", []string{`"json":"son"`, `"post":""`}},
		{"too large", "POST", "/api/form", strings.NewReader("x=" + strings.Repeat("a", 1100)), "application/x-www-form-urlencoded", 413,
			"", "false", []string{`"error":"request_too_large"`}},
		{"too large, chunked", "POST", "/api/form", chunked("x=" + strings.Repeat("a", 1100)), "application/x-www-form-urlencoded", 413,
			"", "false", []string{`"error":"request_too_large"`}},
		{"malformed", "POST", "/api/form", strings.NewReader("x=%zz"), "application/x-www-form-urlencoded", 400,
			"", "false", []string{`"error":"invalid_body"`}},
		{"body-limit after the read-ahead", "POST", "/api/limited/form", chunked("x=" + strings.Repeat("b", 60)), "application/x-www-form-urlencoded", 413,
			"x=" + strings.Repeat("b", 60), "false", []string{`"error":"request_too_large"`}},
		{"within body-limit", "POST", "/api/limited/form", strings.NewReader("x=small"), "application/x-www-form-urlencoded", 200,
			"x=small", "false", []string{`"x":"small"`, `"g":"small"`}},
	}
	for _, c := range cases {
		hdr := []string{}
		if c.ctype != "" {
			hdr = append(hdr, "Content-Type", c.ctype)
		}
		resp, body := do(t, nil, c.method, ta.srv.URL+c.path, c.body, hdr...)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, resp.StatusCode, c.status, body)
		}
		if got := resp.Header.Get("X-Mw-Post"); got != c.mwPost {
			t.Errorf("%s: middleware saw Post %q, want %q", c.name, got, c.mwPost)
		}
		if got := resp.Header.Get("X-Mw-Auth"); got != c.mwAuth {
			t.Errorf("%s: the auth callback in middleware said %s, want %s", c.name, got, c.mwAuth)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: handler answered %s, want %s", c.name, body, w)
			}
		}
		if c.path == "/api/form" && c.status == 200 && resp.Header.Get("X-Tag") != "file" {
			t.Errorf("%s: the file's middleware did not run: %v", c.name, resp.Header)
		}
	}
}
