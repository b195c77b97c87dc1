package host_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// TestCheckUnknownAliasNamesFileOnce: a middleware list naming an alias
// nobody registered is reported by check as one line that starts with
// the file's path, once ("api/x.go: its middleware list names ...").
func TestCheckUnknownAliasNamesFileOnce(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"api/x.go": "//go:build ignore\n\npackage api\n\nimport \"github.com/zealgo/zealgo/host\"\n\n" +
			"var middleware = []string{\"nosuch\"}\n\nvar get = func(a *host.API) any { return \"x\" }\n",
	})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	out, _, code := runCheck(t, app)
	if code == 0 {
		t.Fatalf("check passed a file naming an unknown alias:\n%s", out)
	}
	want := "api/x.go: its middleware list names \"nosuch\", which is not a registered alias\n"
	if !strings.HasPrefix(out, want) || strings.Count(out, "api/x.go") != 1 {
		t.Fatalf("check printed\n%s\nwant it to start with\n%s(the path once)", out, want)
	}
}
