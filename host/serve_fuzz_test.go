package host_test

import (
	"bufio"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// serveFuzzTree is the application the whole-server fuzz target serves:
// handler and page files whose source must never be sent, a static file,
// and plain files standing where a path expects directories.
var serveFuzzTree = map[string]string{
	"api/php/get.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n" +
		"// SECRET-SOURCE\nvar get = func(api *host.API) any { return map[string]any{\"ok\": true} }\n",
	"api/mod/plain.txt":    "not a handler",
	"public/index.go":      "//go:build ignore\n\npackage main\n\n// SECRET-SOURCE\nvar index = func() any { return \"<h1>home</h1>\" }\n",
	"public/css/style.css": "body{}",
	"public/.env":          "SECRET-SOURCE",
	"secret.go":            "SECRET-SOURCE",
}

// serveFuzzSeeds are request targets that once gave a 500 (a file where a
// directory is expected, a segment longer than the file system allows) or
// try to reach source or leave the root.
var serveFuzzSeeds = []string{
	"/", "/api/php/get", "/css/style.css", "/css/style.css/", "/css/style.css/x", "/api/php/get/x",
	"/api/mod/plain.txt/x", "/api/mod/plain/x", "/index.go", "/INDEX.GO", "/%2e%2e/secret.go", "/.env",
	"/api/%2e%2e/secret", "//index.go", "/css/%2e%2e/index.go", "/" + strings.Repeat("a", 300),
	"/api/" + strings.Repeat("b", 300), "/api/" + strings.Repeat("c", 300) + "/x", "/no/such/dir/x",
}

func newFuzzHandler(f *testing.F) (http.Handler, *testutil.Buffer) {
	logs := &testutil.Buffer{}
	app := host.New(host.WithRoot(testutil.WriteTree(f, serveFuzzTree)), host.WithDataDir(f.TempDir()),
		host.WithLogOutput(logs, slog.LevelWarn))
	app.Symbols(symbols.Symbols)
	h, err := app.Handler()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { app.Close() })
	return h, logs
}

// FuzzServe sends arbitrary request targets and methods through the whole
// server: no answer is a 5xx, none carries a source file, and nothing is
// logged at error level.
func FuzzServe(f *testing.F) {
	for _, s := range serveFuzzSeeds {
		f.Add("GET", s)
	}
	f.Add("POST", "/api/php/get")
	f.Add("OPTIONS", "/css/style.css/x")
	h, logs := newFuzzHandler(f)
	f.Fuzz(func(t *testing.T, method, target string) {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.1\r\nHost: x\r\n\r\n")))
		if err != nil {
			return
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		body, _ := io.ReadAll(w.Result().Body)
		if w.Code >= 500 {
			t.Fatalf("%s %q: status %d: %s", method, target, w.Code, body)
		}
		if strings.Contains(string(body), "SECRET-SOURCE") {
			t.Fatalf("%s %q sent source: %s", method, target, body)
		}
		if s := logs.String(); strings.Contains(s, "level=ERROR") {
			t.Fatalf("%s %q logged an error: %s", method, target, s)
		}
	})
}
