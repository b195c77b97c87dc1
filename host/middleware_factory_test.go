package host_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
)

var errNoRole = errors.New("no such role")

// roleFactory is an application's factory: one argument, a known role.
func roleFactory(args ...string) (func(http.Handler) http.Handler, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("role takes one argument, got %d", len(args))
	}
	if args[0] != "admin" {
		return nil, fmt.Errorf("role %q: %w", args[0], errNoRole)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Role", args[0])
			next.ServeHTTP(w, r)
		})
	}, nil
}

// TestMiddlewareFactoryErrors: a factory refuses its arguments with an
// error; start-up fails with an error naming the alias and the
// arguments, wrapping the factory's; a factory that panics is an error
// too, not a crash.
func TestMiddlewareFactoryErrors(t *testing.T) {
	cases := []struct {
		name      string
		configure func(*host.App)
		want      []string
		wrapped   error
	}{
		{"When", func(a *host.App) { a.When("/api/x", "role:guest") },
			[]string{`zealgo: middleware "role:guest"`, `role "guest": no such role`, `(in When("/api/x"))`}, errNoRole},
		{"UseAlias", func(a *host.App) { a.UseAlias("role:a,b") },
			[]string{`zealgo: middleware "role:a,b"`, "role takes one argument, got 2", "(in UseAlias)"}, nil},
		{"ready alias, bad size", func(a *host.App) { a.When("/api", "body-limit:lots") },
			[]string{`zealgo: middleware "body-limit:lots"`, `body-limit: "lots" is not a size`}, nil},
		{"ready alias, bad level", func(a *host.App) { a.UseAlias("gzip:11") },
			[]string{`zealgo: middleware "gzip:11"`, `gzip: level "11" is not -1 to 9`}, nil},
		{"ready alias, too many arguments", func(a *host.App) { a.UseAlias("secure-headers:x") },
			[]string{`zealgo: middleware "secure-headers:x"`, "secure-headers takes 0 argument(s), got 1"}, nil},
		{"factory panics", func(a *host.App) {
			a.MiddlewareAlias("oops", func(...string) (func(http.Handler) http.Handler, error) { panic("bad factory") })
			a.When("/api", "oops:1")
		}, []string{`zealgo: middleware "oops:1": the factory panicked: bad factory`}, nil},
		{"factory makes nothing", func(a *host.App) {
			a.MiddlewareAlias("none", func(...string) (func(http.Handler) http.Handler, error) { return nil, nil })
			a.UseAlias("none")
		}, []string{`zealgo: middleware alias "none" made no middleware`}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError))
			app.MiddlewareAlias("role", roleFactory)
			c.configure(app)
			_, err := app.Handler()
			defer app.Close()
			if err == nil {
				t.Fatal("the application started")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("start-up error %q lacks %q", err, w)
				}
			}
			if c.wrapped != nil && !errors.Is(err, c.wrapped) {
				t.Errorf("start-up error %q does not wrap %v", err, c.wrapped)
			}
		})
	}
}

// TestMiddlewareFactoryInFile: in a handler file's list, a refused
// argument answers 500 unknown_middleware naming the file, the alias with
// its arguments and the factory's reason; a good one runs.
func TestMiddlewareFactoryInFile(t *testing.T) {
	ta := newTestAppWith(t, map[string]string{
		"api/ok.go":       handlerFile("ok", `return map[string]any{"ok": true}`, "role:admin"),
		"api/guest.go":    handlerFile("guest", `return 1`, "role:guest"),
		"api/ratebad.go":  handlerFile("ratebad", `return 1`, "rate-limit:fast"),
		"api/limitbad.go": handlerFile("limitbad", `return 1`, "body-limit:10Q"),
	}, func(a *host.App) { a.MiddlewareAlias("role", roleFactory) })
	resp, body := do(t, nil, "GET", ta.srv.URL+"/api/ok", nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Role") != "admin" {
		t.Errorf("good argument: %d X-Role %q %s", resp.StatusCode, resp.Header.Get("X-Role"), body)
	}
	for path, want := range map[string][]string{
		"/api/guest":    {"api/guest.go", `role:guest`, `no such role`},
		"/api/ratebad":  {"api/ratebad.go", `rate-limit:fast`, `is not a positive number of requests per second`},
		"/api/limitbad": {"api/limitbad.go", `body-limit:10Q`, `is not a size`},
	} {
		resp, body := do(t, nil, "GET", ta.srv.URL+path, nil)
		if resp.StatusCode != 500 || errCode(body) != host.CodeUnknownMiddleware {
			t.Errorf("%s: %d %s, want 500 unknown_middleware", path, resp.StatusCode, body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: body %s lacks %q", path, body, w)
			}
		}
	}
}
