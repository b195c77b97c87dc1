package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// update rewrites the corpus's expected outputs (review the diff!).
var update = flag.Bool("update", false, "rewrite the .check and .response files of the trap corpus")

// trapCorpus is an application root of one tiny handler file per
// interpreter trap: api/<name>.go beside api/<name>.check, the exact
// output of zealgo check for it, and, for each file check accepts (no
// error, warnings allowed), api/<name>.response, the status and body of a
// plain GET.
const trapCorpus = "../interp/check/testdata/traps"

// checkResult is the JSON output of zealgo check --json.
type checkResult struct {
	Files    int `json:"files"`
	Problems []struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Col      int    `json:"col"`
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
	} `json:"problems"`
}

func runCheck(t *testing.T, app *host.App, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = app.Run(context.Background(), append([]string{"check"}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestCheckCorpus: zealgo check prints exactly each file's expected
// problems; the server reports the same problems when it compiles the
// file (in the response or its log); every file check accepts answers a
// plain GET without a panic, as recorded (the host's fixes at work).
func TestCheckCorpus(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(trapCorpus, "api", "*.go"))
	if err != nil || len(names) < 20 {
		t.Fatalf("the corpus has %d files (%v), want at least 20", len(names), err)
	}
	app := host.New(host.WithRoot(trapCorpus), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	text, _, _ := runCheck(t, app)
	jsonOut, _, _ := runCheck(t, app, "--json")
	var res checkResult
	if err := json.Unmarshal([]byte(jsonOut), &res); err != nil {
		t.Fatalf("check --json: %v\n%s", err, jsonOut)
	}
	byFile, isErr := map[string][]string{}, map[string]bool{}
	for _, line := range strings.SplitAfter(text, "\n") {
		if file, _, ok := strings.Cut(line, ":"); ok {
			byFile[file] = append(byFile[file], line)
		}
	}
	for _, p := range res.Problems {
		isErr[p.File] = isErr[p.File] || p.Severity == "error"
	}
	srv, logs := serveCorpus(t)
	for _, path := range names {
		name := strings.TrimSuffix(filepath.Base(path), ".go")
		rel := "api/" + name + ".go"
		t.Run(name, func(t *testing.T) {
			golden(t, strings.TrimSuffix(path, ".go")+".check", strings.Join(byFile[rel], ""))
			code, body := getStatus(t, srv.URL+"/api/"+name)
			if !isErr[rel] {
				golden(t, strings.TrimSuffix(path, ".go")+".response", code+"\n"+body+"\n")
				if code != "200" {
					t.Errorf("GET answered %s %s, though check accepts the file", code, body)
				}
			}
			records := fileRecords(t, logs.String(), rel)
			served := hint(body) + "\n" + strings.Join(records, "\n")
			for _, p := range res.Problems {
				if p.File == rel && !strings.Contains(served, servedForm(p.Message)) {
					t.Errorf("serving %s reports neither in the response nor in the log: %s\nresponse %s\nlog %s", rel, p.Message, body, records)
				}
			}
			for _, r := range records {
				if !isErr[rel] && (strings.Contains(r, "panic") || strings.HasPrefix(r, "ERROR")) {
					t.Errorf("a file check accepts failed: %s", r)
				}
			}
		})
	}
}

// fileRecords returns "LEVEL msg panic" of each log record about rel.
func fileRecords(t *testing.T, log, rel string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var r struct{ Level, Msg, File, Panic, Path, Err string }
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r.File == rel || r.File == "" && r.Path == "/"+strings.TrimSuffix(rel, ".go") {
			// a compile error without --dev is logged under the request
			// id, its message in err (the client gets no file or line)
			out = append(out, strings.TrimSpace(r.Level+" "+r.Msg+" "+r.Panic+" "+r.Err))
		}
	}
	return out
}

// servedForm is the part of a check message that the server reports too:
// for min, max and clear the server's message stops before the advice.
func servedForm(msg string) string {
	if strings.HasPrefix(msg, "the builtin ") {
		msg, _, _ = strings.Cut(msg, " (Go 1.22 rules)")
	}
	return msg
}

// serveCorpus serves the corpus with its log as JSON lines.
func serveCorpus(t *testing.T) (*httptest.Server, *testutil.Buffer) {
	logs := &testutil.Buffer{}
	app := host.New(host.WithRoot(trapCorpus), host.WithDataDir(t.TempDir()),
		host.WithLogger(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	app.Symbols(symbols.Symbols)
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); app.Close() })
	return srv, logs
}

func getStatus(t *testing.T, url string) (code, body string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status[:3], string(b)
}

// hint returns the hint of an error envelope, decoded.
func hint(body string) string {
	var e struct{ Hint string }
	json.Unmarshal([]byte(body), &e)
	return e.Hint
}

// golden compares got with the file at path, or writes it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./host -run TestCheckCorpus -update, and review the result)", err)
	}
	if got != string(want) {
		t.Errorf("%s:\ngot  %q\nwant %q", filepath.Base(path), got, want)
	}
}

// checkHead begins a handler file.
const checkHead = "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n"

// TestCheckJSON: --json gives editors and CI the position, rule and
// severity of each problem, with the same exit status as the text.
func TestCheckJSON(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"api/ok.go":   checkHead + "var ok = func(api *host.API) any { return 1 }\n",
		"api/min.go":  checkHead + "var min2 = 1\n\nvar get = func(api *host.API) any { return min(1, 2) }\n",
		"api/warn.go": "package main\n\nimport \"github.com/zealgo/zealgo/host\"\n\nvar warn = func(api *host.API) any { return \"x\" }\n",
	})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	out, errOut, code := runCheck(t, app, "--json")
	if code != 1 || !strings.Contains(errOut, "2 problem(s) in 3 file(s)") {
		t.Fatalf("exit %d, %s", code, errOut)
	}
	var res checkResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got []string
	for _, p := range res.Problems {
		got = append(got, strings.Join([]string{p.File, itoa(p.Line), itoa(p.Col), p.Rule, p.Severity}, " "))
	}
	sort.Strings(got)
	want := []string{"api/min.go 9 44 builtin error", "api/warn.go 1 1 build-ignore warning"}
	if res.Files != 3 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("files %d, problems:\n%s\nwant\n%s", res.Files, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestCheckTemplates: check parses every template and reports file:line;
// a {{template}} naming no template is a problem too.
func TestCheckTemplates(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"template/layout.html":      "<main>{{block \"content\" .}}{{end}}</main>\n",
		"template/home.html":        "{{template \"layout\" .}}\n{{define \"content\"}}<h1>{{.Title}}</h1>{{end}}\n",
		"template/broken.html":      "<p>\n{{if .X}}\nnever closed\n",
		"template/errors/gone.html": "<p>\n\n{{template \"nowhere\" .}}\n",
	})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, slog.LevelError))
	out, errOut, code := runCheck(t, app)
	want := "template/broken.html:4: unexpected EOF\n" +
		"template/errors/gone.html:3: {{template \"nowhere\"}} names no template: there is no template/nowhere.html and no {{define \"nowhere\"}}\n"
	if code != 1 || out != want || !strings.Contains(errOut, "2 problem(s) in 4 file(s)") {
		t.Fatalf("exit %d:\n%s%s\nwant\n%s", code, out, errOut, want)
	}
}

// TestCheckNeedsNoSecrets: a file using basic-auth checks without
// credentials in the environment (a CI without secrets), and the
// application is left without the credential check used.
func TestCheckNeedsNoSecrets(t *testing.T) {
	t.Setenv(host.BasicAuthEnv, "")
	root := testutil.WriteTree(t, map[string]string{
		"api/admin.go": checkHead + "var middleware = []string{\"basic-auth\"}\n\nvar admin = func(api *host.API) any { return \"secret\" }\n",
	})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	if out, errOut, code := runCheck(t, app); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if got := app.Config().BasicAuth; len(got) != 0 {
		t.Fatalf("check left credentials behind: %v", got)
	}
	// Serving still refuses the alias without credentials.
	resp, err := http.Get(httptest.NewServer(mustHandler(t, app)).URL + "/api/admin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatal("the basic-auth file served without credentials after check")
	}
}

func mustHandler(t *testing.T, app *host.App) http.Handler {
	t.Helper()
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	return h
}

// TestCheckHelp: --help, -h and help list every command with one line.
func TestCheckHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "help"} {
		var out bytes.Buffer
		if code := host.New().Run(context.Background(), []string{arg}, &out, io.Discard); code != 0 {
			t.Fatalf("%s: exit %d", arg, code)
		}
		for _, cmd := range []string{"serve", "check", "routes", "help"} {
			n := 0
			for _, line := range strings.Split(out.String(), "\n") {
				if f := strings.Fields(line); len(f) > 1 && f[0] == cmd {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s: %d lines for %s:\n%s", arg, n, cmd, out.String())
			}
		}
	}
}

// TestCheckCompiledOnly: in a module application with a Go toolchain,
// constructs only compiled Go runs are "compiled-only", named with the
// files that run compiled only, and no error; a typo stays one. With
// --tiered=false they are errors.
func TestCheckCompiledOnly(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"go.mod":        "module example.com/tiered\n\ngo 1.22\n",
		"api/modern.go": checkHead + "import \"slices\"\n\nvar modern = func(api *host.API) any {\n\ts := []int{2, 1}\n\tslices.Sort(s)\n\tfor i := range 2 {\n\t\ts[i]++\n\t}\n\treturn max(s[0], s[1])\n}\n",
		"api/ok.go":     checkHead + "var ok = func(api *host.API) any { return 1 }\n",
	})
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	out, errOut, code := runCheck(t, app, "--json")
	var res checkResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got []string
	for _, p := range res.Problems {
		got = append(got, strings.Join([]string{p.File, itoa(p.Line), p.Rule, p.Severity}, " "))
	}
	want := "api/modern.go 11 missing-symbol compiled-only\napi/modern.go 12 range-int compiled-only\napi/modern.go 15 builtin compiled-only"
	if code != 0 || strings.Join(got, "\n") != want || !strings.Contains(errOut, "1 file(s) run compiled only") {
		t.Errorf("exit %d, problems:\n%s\nwant\n%s\n%s", code, strings.Join(got, "\n"), want, errOut)
	}
	text, errOut, code := runCheck(t, app, "--tiered=false")
	if code != 1 || strings.Contains(text, "compiled only") || !strings.Contains(errOut, "3 error(s)") {
		t.Errorf("--tiered=false: exit %d\n%s%s", code, text, errOut)
	}
}
