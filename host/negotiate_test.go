package host_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// acceptCases are Accept headers (one element per header line; none: no
// Accept header) with what each prefers, HTML or JSON or neither.
var acceptCases = []struct {
	name       string
	accept     []string
	html, json bool
}{
	{"no header", nil, false, false},
	{"*/* alone (curl)", []string{"*/*"}, false, false},
	{"Chrome", []string{"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"}, true, false},
	{"Firefox", []string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, true, false},
	{"application/json", []string{"application/json"}, false, true},
	{"axios", []string{"application/json, text/plain, */*"}, false, true},
	{"JSON by q", []string{"text/html;q=0.5, application/json"}, false, true},
	{"HTML by q", []string{"application/json;q=0.5, text/html"}, true, false},
	{"JSON refused", []string{"application/json;q=0, */*"}, true, false},
	{"HTML refused", []string{"text/html;q=0, */*"}, false, true},
	{"both alike", []string{"text/html, application/json"}, false, false},
	{"both refused", []string{"text/html;q=0, application/json;q=0"}, false, false},
	{"type wildcards", []string{"text/*;q=0.9, application/*"}, false, true},
	{"explicit beats */*", []string{"*/*, application/json"}, false, true},
	{"problem+json", []string{"application/problem+json"}, false, true},
	{"letter case", []string{"TEXT/HTML"}, true, false},
	{"two header lines", []string{"application/json;q=0.4", "text/html;q=0.6"}, true, false},
	{"spaces and parameters", []string{" application/json ; charset=utf-8 ; q=0.8 , text/html ; Q=0.7"}, false, true},
	{"malformed q counts as 1", []string{"application/json;q=high, text/html;q=0.9"}, false, true},
	{"neither type", []string{"text/plain, image/png"}, false, false},
}

// TestPrefersAcceptTable: for each Accept header, the handler's
// api.PrefersHTML and api.PrefersJSON, middleware's host.PrefersHTML and
// host.PrefersJSON, and the framework's own choice for an error page
// outside /api/ (JSON exactly when JSON is preferred) agree.
func TestPrefersAcceptTable(t *testing.T) {
	ta := newTestAppWith(t, map[string]string{
		"api/neg.go": handlerFile("neg", `return map[string]any{"html": api.PrefersHTML(), "json": api.PrefersJSON()}`),
	}, func(a *host.App) {
		a.Use(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Mw-Html", strconv.FormatBool(host.PrefersHTML(r)))
				w.Header().Set("X-Mw-Json", strconv.FormatBool(host.PrefersJSON(r)))
				next.ServeHTTP(w, r)
			})
		})
	})
	for _, tc := range acceptCases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := getAccept(t, ta.srv.URL+"/api/neg", tc.accept)
			var got struct{ HTML, JSON bool }
			if err := json.Unmarshal([]byte(body), &got); resp.StatusCode != 200 || err != nil {
				t.Fatalf("handler: %d %s", resp.StatusCode, body)
			}
			if got.HTML != tc.html || got.JSON != tc.json {
				t.Errorf("api: PrefersHTML %v, PrefersJSON %v; want %v, %v", got.HTML, got.JSON, tc.html, tc.json)
			}
			if h, j := resp.Header.Get("X-Mw-Html"), resp.Header.Get("X-Mw-Json"); h != strconv.FormatBool(tc.html) || j != strconv.FormatBool(tc.json) {
				t.Errorf("middleware: PrefersHTML %s, PrefersJSON %s; want %v, %v", h, j, tc.html, tc.json)
			}
			resp, body = getAccept(t, ta.srv.URL+"/nowhere", tc.accept)
			want := "text/html; charset=utf-8"
			if tc.json {
				want = "application/json"
			}
			if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != want {
				t.Errorf("error page: %d %q, want 404 %q: %.80s", resp.StatusCode, resp.Header.Get("Content-Type"), want, body)
			}
		})
	}
}

// getAccept GETs url with one Accept header line per element of accept.
func getAccept(t *testing.T, url string, accept []string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range accept {
		req.Header.Add("Accept", a)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}
