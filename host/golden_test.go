package host_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// TestGolden runs every archive under testdata/golden. An archive holds the
// files of an application root (api/..., public/...) and one or more
// request/response pairs:
//
//	-- request --            -- response --
//	POST /api/x              201
//	Content-Type: ...        Content-Type: application/json
//	                         !X-Absent
//	body                     (blank line)
//	                         {"exact":"body"}   or   ~regexp
//
// Sections "request 2"/"response 2" add more pairs, run in order. Response
// headers listed must match exactly (or "Name: ~regexp"), "!Name" must be
// absent; others are not checked. runArchive lists the other sections
// (config, forbid, log, nolog).
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden archives: %v", err)
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runArchive(t, p, archiveRun{})
		})
	}
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

// archiveRun says how runArchive checks an archive's expected bodies.
type archiveRun struct {
	// trailingNewline also accepts a body with one newline more than the
	// expected one: a static file keeps the newline every txtar file ends
	// with.
	trailingNewline bool
}

// runArchive serves the files of the archive at path and checks its
// request/response pairs in order, then its log sections. Besides files
// and pairs, an archive may hold:
//
//	-- config --   one option a line: "dev" serves with Config.Dev
//	-- forbid --   substrings no response body may contain
//	-- log --      substrings the server log must contain
//	-- nolog --    substrings it must not contain
func runArchive(t *testing.T, path string, run archiveRun) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	files, sections := map[string]string{}, map[string]string{}
	for _, f := range ar.Files {
		switch {
		case strings.HasPrefix(f.Name, "request"), strings.HasPrefix(f.Name, "response"),
			f.Name == "log", f.Name == "nolog", f.Name == "config", f.Name == "forbid":
			sections[f.Name] = string(f.Data)
		default:
			files[f.Name] = string(f.Data)
		}
	}
	var opts []host.Option
	for _, c := range lines(sections["config"]) {
		switch c {
		case "dev":
			opts = append(opts, host.WithDev(true))
		default:
			t.Fatalf("unknown config %q", c)
		}
	}
	ta := newTestApp(t, files, opts...)
	forbid := lines(sections["forbid"])
	for i := 1; ; i++ {
		suffix := ""
		if i > 1 {
			suffix = " " + strconv.Itoa(i)
		}
		req, ok := sections["request"+suffix]
		if !ok {
			if i == 1 {
				t.Fatal("archive has no request section")
			}
			break
		}
		want, ok := sections["response"+suffix]
		if !ok {
			t.Fatalf("request%s has no response%s", suffix, suffix)
		}
		checkExchange(t, ta.srv.URL, "request"+suffix, req, want, forbid, run)
	}
	for _, want := range lines(sections["log"]) {
		if !strings.Contains(ta.logs.String(), want) {
			t.Errorf("log lacks %q; log:\n%s", want, ta.logs.String())
		}
	}
	for _, bad := range lines(sections["nolog"]) {
		if strings.Contains(ta.logs.String(), bad) {
			t.Errorf("log has %q; log:\n%s", bad, ta.logs.String())
		}
	}
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// splitMessage splits "first line\nheaders\n\nbody".
func splitMessage(s string) (first string, header []string, body string) {
	head, body, _ := strings.Cut(s, "\n\n")
	hl := strings.Split(strings.TrimRight(head, "\n"), "\n")
	return hl[0], hl[1:], body
}

// noRedirect is a client that returns redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// checkExchange sends reqText to base as written (no cleaning, no
// re-escaping of the target) and checks the response against want: the
// status, the headers listed ("Name: value", "Name: ~regexp", or "!Name"
// for none), and the body (exact, or "~regexp"). No body may carry a stack
// trace, handler source or a forbid string that want does not hold.
func checkExchange(t *testing.T, base, name, reqText, want string, forbid []string, run archiveRun) {
	t.Helper()
	first, hdrs, body := splitMessage(reqText)
	method, target, _ := strings.Cut(first, " ")
	req, err := http.NewRequest(method, base, strings.NewReader(strings.TrimSuffix(body, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque, req.URL.RawQuery = target, ""
	if p, q, ok := strings.Cut(target, "?"); ok {
		req.URL.Opaque, req.URL.RawQuery = p, q
	}
	for _, h := range hdrs {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", name, first, err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	wantStatus, wantHdrs, wantBody := splitMessage(want)
	if strconv.Itoa(resp.StatusCode) != strings.TrimSpace(wantStatus) {
		t.Errorf("%s %s: status %d, want %s; body %.300s", name, first, resp.StatusCode, wantStatus, got)
	}
	for _, h := range wantHdrs {
		if absent, ok := strings.CutPrefix(h, "!"); ok {
			if v := resp.Header.Values(absent); len(v) > 0 {
				t.Errorf("%s %s: header %s = %q, want none", name, first, absent, v)
			}
			continue
		}
		k, v, _ := strings.Cut(h, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		g := strings.Join(resp.Header.Values(k), ", ")
		if re, ok := strings.CutPrefix(v, "~"); ok {
			if !regexp.MustCompile(re).MatchString(g) {
				t.Errorf("%s %s: header %s = %q, does not match %s", name, first, k, g, re)
			}
		} else if g != v {
			t.Errorf("%s %s: header %s = %q, want %q", name, first, k, g, v)
		}
	}
	wantBody = strings.TrimSuffix(wantBody, "\n")
	if re, ok := strings.CutPrefix(wantBody, "~"); ok {
		if !regexp.MustCompile(re).Match(got) {
			t.Errorf("%s %s: body %q does not match %s", name, first, got, re)
		}
	} else if string(got) != wantBody && !(run.trailingNewline && string(got) == wantBody+"\n") {
		t.Errorf("%s %s: body\n  %q\nwant\n  %q", name, first, got, wantBody)
	}
	for _, leak := range append([]string{"goroutine ", "runtime/debug", "package main"}, forbid...) {
		if bytes.Contains(got, []byte(leak)) && !strings.Contains(wantBody, leak) {
			t.Errorf("%s %s: body leaks %q: %s", name, first, leak, got)
		}
	}
}
