package host_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/host/hosttest"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// TestGolden runs every archive under testdata/golden with hosttest (its
// package doc describes the format) on the application newGoldenApp builds.
func TestGolden(t *testing.T) {
	hosttest.RunDir(t, "testdata/golden", hosttest.WithApp(newGoldenApp), hosttest.Parallel())
}

// newGoldenApp is the application the golden archives run on: host.New
// with the host symbols and the test aliases "tag" and "deny", as
// newTestApp serves.
func newGoldenApp() *host.App {
	app := host.New()
	app.Symbols(symbols.Symbols)
	addTestAliases(app)
	return app
}

// testApp is an application served on loopback for a test.
type testApp struct {
	srv  *httptest.Server
	logs *testutil.Buffer
	root string
	app  *host.App
}

// newTestAppProvide is newTestApp with values made injectable by Provide.
func newTestAppProvide(t *testing.T, files map[string]string, provide ...any) *testApp {
	t.Helper()
	return newTestAppWith(t, files, func(a *host.App) {
		for _, v := range provide {
			a.Provide(v)
		}
	})
}

// newTestApp writes files into a fresh root and serves it, with the test
// aliases "tag" and "deny" registered.
func newTestApp(t *testing.T, files map[string]string, opts ...host.Option) *testApp {
	t.Helper()
	return newTestAppWith(t, files, nil, opts...)
}

// newTestAppWith is newTestApp with a function that configures the App
// before it starts.
func newTestAppWith(t *testing.T, files map[string]string, configure func(*host.App), opts ...host.Option) *testApp {
	t.Helper()
	root := testutil.WriteTree(t, files)
	logs := &testutil.Buffer{}
	opts = append([]host.Option{host.WithRoot(root), host.WithLogOutput(logs, slog.LevelDebug)}, opts...)
	app := host.New(opts...)
	app.Symbols(symbols.Symbols)
	addTestAliases(app)
	if configure != nil {
		configure(app)
	}
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); app.Close() })
	return &testApp{srv: srv, logs: logs, root: root, app: app}
}

// addTestAliases registers the test aliases: "tag" adds its arguments,
// joined by "+" ("-" for none), as an X-Tag header; "deny" answers 418
// without calling the next handler.
func addTestAliases(app *host.App) {
	app.MiddlewareAlias("tag", func(args ...string) (func(http.Handler) http.Handler, error) {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tag := strings.Join(args, "+")
				if tag == "" {
					tag = "-"
				}
				w.Header().Add("X-Tag", tag)
				next.ServeHTTP(w, r)
			})
		}, nil
	})
	app.MiddlewareAlias("deny", func(args ...string) (func(http.Handler) http.Handler, error) {
		return func(http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "denied", http.StatusTeapot)
			})
		}, nil
	})
}

// noRedirect is a client that returns redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
