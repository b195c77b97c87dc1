package check_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/interp/check"
)

// noSources: a package that imports no other application package.
type noSources struct{}

func (noSources) Package(string) (*token.FileSet, []*ast.File, bool) { return nil, nil, false }

// TestPackageState: check warns, at its declaration, about each package
// variable of an application package whose value the interpreted copies
// of the package would each compute or set on their own (a random key,
// the clock, a setter's argument, a counter), the funcs of the package's
// other files included; values the same in every copy stay quiet.
func TestPackageState(t *testing.T) {
	files := []struct{ name, src string }{
		{"lib/keys/keys.go", `package keys

import (
	"crypto/rand"
	"os"
	"sync"
	"text/template"
	"time"
)

var secret = newKey()
var started = time.Now()
var fromEnv = os.Getenv("KEY")
var name = "blog"
var hits int
var db *DB
var tmpl *template.Template
var once sync.Once
var nonce = make([]byte, 16)
var token = func() string { b := make([]byte, 8); rand.Read(b); return string(b) }()

func init() { rand.Read(nonce) }
`},
		{"lib/keys/more.go", `package keys

import (
	"crypto/rand"
	"text/template"
)

// DB is a handle.
type DB struct{}

func newKey() []byte { b := make([]byte, 32); rand.Read(b); return b }

// Hit counts.
func Hit() int { hits++; return hits }

// SetDB is a setter that setup.go would call.
func SetDB(d *DB) { db = d }

// Tmpl parses lazily: the same in every copy.
func Tmpl() *template.Template {
	once.Do(func() { tmpl = template.Must(template.New("x").Parse(name)) })
	return tmpl
}

// Log passes a variable by value.
func Log(msg string) string { return fromEnv + name + msg }
`},
	}
	fset := token.NewFileSet()
	var pfs []check.PackageFile
	for _, f := range files {
		syn, err := parser.ParseFile(fset, f.name, f.src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		pfs = append(pfs, check.PackageFile{Path: f.name, Src: []byte(f.src), File: syn})
	}
	got := map[string]string{}
	for _, r := range check.New().Package("example.com/blog/lib/keys", fset, pfs, noSources{}) {
		for _, d := range r.Diagnostics {
			if d.Rule != "package-state" {
				t.Errorf("unexpected problem: %s [%s]", d, d.Rule)
				continue
			}
			name := strings.Fields(d.Msg)[2]
			got[name] = d.String()
		}
	}
	want := map[string]string{
		"secret":  "lib/keys/keys.go:11:5: package variable secret is computed at run time (newKey (rand.Read))",
		"started": "lib/keys/keys.go:12:5: package variable started is computed at run time (time.Now)",
		"hits":    "lib/keys/keys.go:15:5: package variable hits is changed by func Hit",
		"db":      "lib/keys/keys.go:16:5: package variable db is set by func SetDB from its arguments",
		"nonce":   "lib/keys/keys.go:19:5: package variable nonce is set by func init (rand.Read)",
		"token":   "lib/keys/keys.go:20:5: package variable token is computed at run time (rand.Read)",
	}
	for name, w := range want {
		if !strings.HasPrefix(got[name], w) {
			t.Errorf("%s: got %q, want %q...", name, got[name], w)
		}
		if !strings.Contains(got[name], "app.Provide") {
			t.Errorf("%s: the warning says not what to do: %s", name, got[name])
		}
	}
	for name, d := range got {
		if want[name] == "" {
			t.Errorf("a variable the same in every copy is reported: %s", d)
		}
	}
	if !check.IsWarning("package-state") {
		t.Errorf("package-state is not a warning")
	}
	handler := "//go:build ignore\n\npackage main\n\nimport \"time\"\n\nvar started = time.Now()\n\nvar f = func() any { return started }\n"
	if r := check.New().File("api/x.go", []byte(handler)); len(r.Diagnostics) != 0 {
		t.Errorf("a handler file's own variable, its own in both modes, is reported: %v", r.Diagnostics)
	}
}
