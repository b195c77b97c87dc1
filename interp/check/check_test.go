package check_test

import (
	"go/constant"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/zealgo/zealgo/interp/check"
)

// TestREADMERules: every item of docs/modes.md's list of what the
// interpreter does not support starts with the rules it stands for, every
// rule has an item, and an item says "(fixed)" exactly when the host fixes
// its rule.
func TestREADMERules(t *testing.T) {
	b, err := os.ReadFile("../../docs/modes.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## What the interpreter does not support")
	if !ok {
		t.Fatal("docs/modes.md has no section on what the interpreter does not support")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rules := map[string]check.Rule{}
	for _, r := range check.Rules {
		rules[r.ID] = r
	}
	lead := regexp.MustCompile("^- ((?:`[a-z-]+`(?:, )?)+)( \\(fixed\\))?:")
	seen := map[string]bool{}
	for _, item := range strings.Split(section, "\n- ")[1:] {
		item = "- " + item
		m := lead.FindStringSubmatch(item)
		if m == nil {
			t.Errorf("docs/modes.md: item names no rule: %.60q", item)
			continue
		}
		for _, id := range strings.Split(strings.ReplaceAll(m[1], "`", ""), ", ") {
			r, ok := rules[id]
			switch {
			case !ok:
				t.Errorf("docs/modes.md names rule %s, which check does not have", id)
			case r.Fixed != (m[2] != ""):
				t.Errorf("docs/modes.md: item of %s: fixed %v, rule says %v", id, m[2] != "", r.Fixed)
			}
			seen[id] = true
		}
	}
	for id := range rules {
		if !seen[id] {
			t.Errorf("rule %s is missing from docs/modes.md's list", id)
		}
	}
}

// Shapes for the symbol-table test: the Checker sees a package only
// through these reflect values, as yaegi extract writes them.
type (
	Node struct {
		Name string
		Next *Node
		hid  int // an unexported field of a linked type: files cannot use it
	}
	Base   struct{ ID int }
	Widget struct {
		Base
		Tags []string
	}
	Namer interface{ Name() string }
	Level int
)

func (n Node) Label() string               { return n.Name }
func (n *Node) Rename(s string)            { n.Name = s }
func (b Base) Key() int                    { return b.ID }
func (l Level) String() string             { return "level" }
func NewNode(name string) *Node            { return &Node{Name: name} }
func Join(sep string, xs ...string) string { return strings.Join(xs, sep) }

var Default = Node{Name: "default", hid: 1}

const High Level = 3

// TestSymbolTable: funcs (variadic too), vars, typed and untyped
// constants, named types with value and pointer methods, embedded fields,
// recursive types and interfaces of a symbol table type-check as Go would,
// and a name the table lacks is reported with a suggestion.
func TestSymbolTable(t *testing.T) {
	table := check.Exports{"example.com/shapes/shapes": {
		"Node":    reflect.ValueOf((*Node)(nil)),
		"Widget":  reflect.ValueOf((*Widget)(nil)),
		"Base":    reflect.ValueOf((*Base)(nil)),
		"Namer":   reflect.ValueOf((*Namer)(nil)),
		"Level":   reflect.ValueOf((*Level)(nil)),
		"NewNode": reflect.ValueOf(NewNode),
		"Join":    reflect.ValueOf(Join),
		"Default": reflect.ValueOf(&Default).Elem(),
		"High":    reflect.ValueOf(High),
		"Max":     reflect.ValueOf(constant.MakeFromLiteral("10", token.INT, 0)),
		"_Namer":  reflect.ValueOf((*struct{})(nil)), // an interface wrapper: skipped
	}}
	c := check.New(table)
	ok := `//go:build ignore

package main

import "example.com/shapes"

var f = func() any {
	n := shapes.NewNode("a")
	n.Rename(n.Label() + shapes.Join("-", "x", "y"))
	n.Next = &shapes.Default
	w := shapes.Widget{Base: shapes.Base{ID: 2}, Tags: []string{"t"}}
	var lv shapes.Level = shapes.High
	var arr [shapes.Max]int
	var named interface{ Label() string } = n
	return []any{n.Next.Name, w.Key(), w.ID, lv.String(), len(arr), named}
}
`
	if r := c.File("ok.go", []byte(ok)); len(r.Diagnostics) != 0 || !r.Typed {
		t.Fatalf("valid use of the table: typed %v, %v", r.Typed, r.Diagnostics)
	}
	bad := strings.Replace(ok, `shapes.NewNode("a")`, `shapes.NewNod("a")`, 1)
	bad = strings.Replace(bad, "n.Next = &shapes.Default", "shapes.Default.hid = 1", 1)
	got := diagnostics(c.File("bad.go", []byte(bad)))
	want := []string{
		"bad.go:8:7: undefined: shapes.NewNod; did you mean shapes.NewNode?",
		"bad.go:10:17: shapes.Default.hid undefined (cannot refer to unexported field hid)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func diagnostics(r *check.Result) []string {
	var out []string
	for _, d := range r.Diagnostics {
		out = append(out, d.String())
	}
	return out
}

// TestFixesKeepLines: the rewrites of a file keep every line where it was
// (the appended helpers come after the last line).
func TestFixesKeepLines(t *testing.T) {
	src := `//go:build ignore

package main

import (
	"errors"
	"fmt"
)

type notFound struct{ id int }

func (e *notFound) Error() string { return fmt.Sprint("not found ", e.id) }

type item struct {
	Name string
	note string ` + "`json:\"note\" db:\"note\"`" + `
}

func pick[T, U any](x T, f func(T) U) U { return f(x) }

func name(i int) string { return fmt.Sprint(i) }

var f = func() any {
	err := fmt.Errorf("w: %w", &notFound{1})
	var nf *notFound
	var fs []func() string
	for _, s := range []string{"a", "b"} {
		fs = append(fs, func() string { return s })
	}
	return map[string]any{"as": errors.As(err, &nf), "same": err != nil, "item": item{}, "pick": pick(1, name)}
}
`
	r := check.New().File("f.go", []byte(src))
	if len(r.Diagnostics) != 0 || !r.Typed {
		t.Fatalf("diagnostics %v", r.Diagnostics)
	}
	out := apply(src, r.Edits)
	lines, outLines := strings.Split(src, "\n"), strings.Split(out, "\n")
	for i := range lines {
		if i < len(outLines) && strings.TrimSpace(lines[i]) != "" && !strings.Contains(outLines[i], firstWord(lines[i])) {
			t.Errorf("line %d moved: %q became %q", i+1, lines[i], outLines[i])
		}
	}
	for _, want := range []string{
		"note string `json:\"-\" db:\"note\"`",
		`fmt.Errorf("w: %w", __zealgo_rt.Err(&notFound{1}))`,
		"{ s := s; fs = append(", // on the line of the range clause
		"pick[int, string](1, name)",
		"func(e error, t **notFound) bool {",
		"func __zealgo_unwrap(e error) error {",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("rewritten file lacks %q:\n%s", want, out)
		}
	}
	if !r.UsesRT {
		t.Error("UsesRT is false")
	}
}

func firstWord(s string) string {
	f := strings.Fields(s)
	return f[0]
}

func apply(src string, edits []check.Edit) string {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].Off < edits[j].Off })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.WriteString(src[last:e.Off])
		b.WriteString(e.Text)
		last = e.End
	}
	b.WriteString(src[last:])
	return b.String()
}

// TestCheckerConcurrent: one Checker serves concurrent files (the server
// compiles files in parallel); run with -race.
func TestCheckerConcurrent(t *testing.T) {
	c := check.New()
	srcs := []string{
		"package main\n\nimport \"net/http\"\n\nvar f = func(r *http.Request) any { return r.URL.Path }\n",
		"package main\n\nimport \"encoding/json\"\n\nvar f = func() any { b, _ := json.Marshal(1); return b }\n",
		"package main\n\nimport \"slices\"\n\nvar f = func() any { return slices.Index([]int{1}, 1) }\n",
	}
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(src string) {
			defer wg.Done()
			if r := c.File("x.go", []byte(src)); !r.Typed {
				t.Errorf("%s: %v", src, r.Diagnostics)
			}
		}(srcs[i%len(srcs)])
	}
	wg.Wait()
}
