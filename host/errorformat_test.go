package host_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// formatSetup registers an error formatter in RealWorld's shape, with the
// status and code beside it, and the middleware whose errors it shapes.
const formatSetup = `//go:build ignore

package main

import (
	"net/http"

	"github.com/zealgo/zealgo/host"
)

var setup = func(app *host.App) error {
	app.When("/api/small", "body-limit:10")
	app.When("/api/rate", "rate-limit:0.001")
	app.When("/api/slow", "timeout:50ms")
	app.ErrorFormatter(func(r *http.Request, e *host.Error) any {
		return map[string]any{"errors": map[string][]string{"body": {e.Hint}}, "status": e.Status, "code": e.Code}
	})
	return nil
}
`

// formatFiles are the handler files whose errors TestErrorFormatter asks for.
var formatFiles = map[string]string{
	"setup.go": formatSetup,
	"api/items.go": `//go:build ignore

package main

var get = func() any { return []int{} }
`,
	"api/bind.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n" +
		"var post = func(api *host.API) error {\n\tvar in struct {\n\t\tTitle string `json:\"title\" validate:\"required\"`\n\t}\n\treturn api.Bind(&in)\n}\n",
	"api/small.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n" +
		"var small = func(api *host.API) error {\n\tvar in map[string]any\n\treturn api.Bind(&in)\n}\n",
	"api/rate.go": "//go:build ignore\n\npackage main\n\nvar rate = func() any { return []int{1} }\n",
	"api/boom.go": "//go:build ignore\n\npackage main\n\nvar boom = func() any { panic(\"secret detail\") }\n",
	"api/slow.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n" +
		"var slow = func(api *host.API) any {\n\t<-api.Context().Done()\n\treturn []int{1}\n}\n",
}

// TestErrorFormatter: every error the framework answers under /api/ (400,
// 404, 405, 413, 415, 422 from api.Bind, 429, 500, 503) has the body the
// application's formatter made, with the error's status, and no stack or
// source.
func TestErrorFormatter(t *testing.T) {
	ta := newTestApp(t, formatFiles)
	for _, tc := range []struct {
		method, path, ctype, body string
		status                    int
		code                      string
	}{
		{"GET", "/api/no/such", "", "", 404, "method_not_found"},
		{"GET", "/api/bad$name", "", "", 400, "invalid_request"},
		{"PUT", "/api/items", "", "", 405, "method_not_allowed"},
		{"POST", "/api/bind", "application/json", `{"title":`, 400, "invalid_input"},
		{"POST", "/api/bind", "application/xml", `<a/>`, 415, "unsupported_media_type"},
		{"POST", "/api/bind", "application/json", `{}`, 422, "validation_failed"},
		{"POST", "/api/small", "application/json", `{"a":"0123456789"}`, 413, "request_too_large"},
		{"GET", "/api/rate", "", "", 200, ""},
		{"GET", "/api/rate", "", "", 429, "too_many_requests"},
		{"GET", "/api/boom", "", "", 500, "internal_error"},
		{"GET", "/api/slow", "", "", 503, "service_unavailable"},
	} {
		req, _ := http.NewRequest(tc.method, ta.srv.URL+tc.path, strings.NewReader(tc.body))
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, resp.StatusCode, b, tc.status)
			continue
		}
		if tc.status == 200 {
			continue
		}
		var got struct {
			Errors struct{ Body []string } `json:"errors"`
			Status int                     `json:"status"`
			Code   string                  `json:"code"`
			Error  *string                 `json:"error"`
		}
		if err := json.Unmarshal(b, &got); err != nil || got.Status != tc.status || got.Code != tc.code ||
			len(got.Errors.Body) != 1 || got.Errors.Body[0] == "" || got.Error != nil {
			t.Errorf("%s %s: %d %s, want the formatter's body with %d %s", tc.method, tc.path, resp.StatusCode, b, tc.status, tc.code)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: Content-Type %q", tc.method, tc.path, ct)
		}
		if strings.Contains(string(b), "secret detail") || strings.Contains(string(b), ".go:") {
			t.Errorf("%s %s: the body leaks the cause: %s", tc.method, tc.path, b)
		}
	}
}
