package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/vet"
	"github.com/zealgo/zealgo/symbols"
)

// A snippet is one ```go block of a page.
type snippet struct {
	page string // docs/handlers.md
	line int    // of the opening fence
	info string // the info string after "go": a file path, or "" or "fragment"
	src  string
}

func (s snippet) String() string { return fmt.Sprintf("%s:%d", s.page, s.line) }

var fence = regexp.MustCompile("^(\\s*)```go(?:\\s+(\\S+))?\\s*$")

// snippets returns the ```go blocks of a Markdown file.
func snippets(t *testing.T, file, page string) []snippet {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []snippet
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		s := snippet{page: page, line: i + 1, info: m[2]}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], m[1]))
		}
		s.src = strings.Join(body, "\n") + "\n"
		out = append(out, s)
	}
	return out
}

// pages returns every Markdown page of docs/ and the README, by name.
func pages(t *testing.T) map[string][]snippet {
	names, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]snippet{"README.md": snippets(t, "../README.md", "README.md")}
	for _, n := range names {
		out["docs/"+n] = snippets(t, n, "docs/"+n)
	}
	return out
}

// TestSnippets checks every ```go block of docs/*.md and README.md:
//
//   - a block whose info string is a path (```go api/hello.go) is a file of
//     an application: the blocks of one page with paths make one
//     application (module example.com/blog) that `zealgo check` must pass;
//   - a block with a package clause is a whole Go file, type-checked;
//   - any other block is a fragment: declarations, or statements that are
//     type-checked inside a func whose parameters are app (*host.App), api
//     (*host.API), r (*http.Request), w (http.ResponseWriter), ctx
//     (context.Context) and db (*sql.DB), which returns any, with the
//     imports its selectors name. Unused variables and imports and a
//     missing return are let through.
func TestSnippets(t *testing.T) {
	t.Setenv("CGO_ENABLED", "0") // go list -export builds as zealgo build and .ci/run do (testutil.BuildStatic)
	all := pages(t)
	var apps = map[string][]snippet{}
	var goFiles []snippet
	total := 0
	for page, list := range all {
		for _, s := range list {
			total++
			if strings.HasSuffix(s.info, ".go") {
				apps[page] = append(apps[page], s)
			} else {
				goFiles = append(goFiles, s)
			}
		}
	}
	if total < 20 {
		t.Fatalf("found %d Go snippets, want at least 20", total)
	}
	start := time.Now()
	for page, files := range apps {
		checkApp(t, page, files)
	}
	t.Logf("%d snippets: %d files of applications checked in %v", total, total-len(goFiles), time.Since(start))
	start = time.Now()
	typeCheck(t, goFiles)
	t.Logf("%d Go files and fragments type-checked in %v", len(goFiles), time.Since(start))
}

// checkApp writes the files into a new application and runs `zealgo check`.
func checkApp(t *testing.T, page string, files []snippet) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/blog\n\ngo 1.26.8\n")
	at := map[string]snippet{}
	for _, s := range files {
		if prev, dup := at[s.info]; dup {
			t.Errorf("%s and %s both write %s", prev, s, s.info)
		}
		at[s.info] = s
		write(s.info, s.src)
	}
	app := host.New(host.WithRoot(root), host.WithLogOutput(io.Discard, slog.LevelError))
	app.Symbols(symbols.Symbols)
	problems, n, err := app.Check()
	if err != nil {
		t.Fatalf("%s: check: %v", page, err)
	}
	if n == 0 {
		t.Errorf("%s: check read no file", page)
	}
	for _, p := range problems {
		file, _, _ := strings.Cut(p, ":")
		t.Errorf("%s (%s): %s", at[file], page, p)
	}
}

// imports names the packages a fragment may use by their package name.
var imports = map[string]string{
	"host": "github.com/zealgo/zealgo/host", "hosttest": "github.com/zealgo/zealgo/host/hosttest",
	"symbols": "github.com/zealgo/zealgo/symbols", "storesym": "github.com/zealgo/zealgo/sample/storesym",
	"store": "github.com/zealgo/zealgo/sample/store",
	"http":  "net/http", "fmt": "fmt", "strings": "strings", "context": "context", "sql": "database/sql",
	"slog": "log/slog", "time": "time", "errors": "errors", "testing": "testing", "os": "os",
	"json": "encoding/json", "io": "io", "strconv": "strconv", "sort": "sort", "sync": "sync",
	"httptest": "net/http/httptest",
}

const fragmentParams = "app *host.App, api *host.API, r *http.Request, w http.ResponseWriter, " +
	"ctx context.Context, db *sql.DB"

// source returns a snippet as a Go file: itself when it has a package
// clause, else a fragment wrapped into one.
func source(fset *token.FileSet, s snippet) (*ast.File, bool, error) {
	if f, err := parser.ParseFile(fset, s.String(), s.src, parser.ParseComments); err == nil {
		return f, false, nil
	} else if regexp.MustCompile(`(?m)^package \w+`).MatchString(s.src) {
		return nil, false, err
	}
	var b strings.Builder
	b.WriteString("package fragment\n\nimport (\n")
	use := map[string]bool{"host": true, "http": true, "context": true, "sql": true}
	for name := range imports {
		if regexp.MustCompile(`\b` + name + `\.`).MatchString(s.src) {
			use[name] = true
		}
	}
	var names []string
	for n := range use {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\t%q\n", imports[n])
	}
	b.WriteString(")\n\n")
	head := b.String()
	// Declarations at package level first; statements inside a func.
	src := head + fmt.Sprintf("//line %s:%d\n", s.page, s.line+1) + s.src
	if f, err := parser.ParseFile(fset, "fragment.go", src, 0); err == nil {
		return f, true, nil
	}
	src = head + "var _ = func(" + fragmentParams + ") any {\n" +
		fmt.Sprintf("//line %s:%d\n", s.page, s.line+1) + s.src + "}\n"
	f, err := parser.ParseFile(fset, "fragment.go", src, 0)
	return f, true, err
}

// typeCheck type-checks Go files and fragments against the module.
func typeCheck(t *testing.T, list []snippet) {
	fset := token.NewFileSet()
	type parsed struct {
		s        snippet
		f        *ast.File
		fragment bool
	}
	var files []parsed
	need := map[string]bool{}
	for _, s := range list {
		f, frag, err := source(fset, s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		for _, im := range f.Imports {
			need[strings.Trim(im.Path.Value, `"`)] = true
		}
		files = append(files, parsed{s, f, frag})
	}
	imp := load(t, fset, need)
	for _, p := range files {
		conf := types.Config{Importer: imp}
		var errs []string
		conf.Error = func(err error) {
			msg := err.Error()
			if p.fragment && (strings.Contains(msg, "declared and not used") || strings.Contains(msg, "imported and not used") || strings.Contains(msg, "missing return")) {
				return
			}
			errs = append(errs, msg)
		}
		conf.Check(path.Base(p.s.page), fset, []*ast.File{p.f}, nil)
		for _, e := range errs {
			t.Errorf("snippet %s: %s\n%s", p.s, e, p.s.src)
		}
	}
}

// load returns an importer of the packages the snippets import, read from
// the export data the go command keeps in its build cache (as zealgo vet
// reads it).
func load(t *testing.T, fset *token.FileSet, need map[string]bool) types.Importer {
	imp, err := vet.ExportImporter("..", fset, need)
	if err != nil {
		t.Fatal(err)
	}
	return imp
}

// pending are pages that other branches write; the index links them already.
var pending = map[string]bool{}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile("(?m)^#+ (.+)$")
)

// anchor is the id GitHub gives a heading.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestLinks: every relative link of docs/*.md and README.md leads to a file
// that exists and, with a #fragment, to a heading of that page; every page
// of docs/ is linked from the index.
func TestLinks(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	files = append(files, "../README.md")
	anchors := map[string]map[string]bool{}
	ids := func(file string) map[string]bool {
		if m, ok := anchors[file]; ok {
			return m
		}
		m := map[string]bool{}
		if b, err := os.ReadFile(file); err == nil {
			for _, h := range heading.FindAllStringSubmatch(string(b), -1) {
				m[anchor(h[1])] = true
			}
		}
		anchors[file] = m
		return m
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			page, frag, _ := strings.Cut(target, "#")
			dest := file
			if page != "" {
				dest = filepath.Join(filepath.Dir(file), page)
			}
			if _, err := os.Stat(dest); err != nil {
				if !pending[filepath.Base(dest)] {
					t.Errorf("%s: link %s: %v", file, target, err)
				}
				continue
			}
			if frag != "" && !ids(dest)[frag] {
				t.Errorf("%s: link %s: no heading #%s in %s", file, target, frag, dest)
			}
		}
	}
	index, err := os.ReadFile("index.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f != "index.md" && !strings.HasPrefix(f, "../") && !strings.Contains(string(index), "]("+f+")") {
			t.Errorf("index.md does not link %s", f)
		}
	}
}
