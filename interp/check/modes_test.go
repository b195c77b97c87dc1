package check_test

import (
	"strings"
	"testing"

	"github.com/zealgo/zealgo/interp/check"
)

const modesHead = "//go:build ignore\n\npackage main\n\nimport (\n\t\"fmt\"\n\t\"sync\"\n)\n\nvar _ = fmt.Sprint\n\nvar mu sync.Mutex\n\n" +
	"type point struct{ X, Y int }\n\nfunc (p *point) Move() { p.X++ }\n\nfunc bump(p *int) { *p++ }\n\nvar kept []*point\n\nfunc keep(p *point) { kept = append(kept, p) }\n\n"

// TestLoopVarEscape: in a three-clause loop whose body changes its
// variable, the loop-var rule warns only about a variable that outlives
// its iteration: a closure called where it is written and an address
// passed to a call need nothing (and copying for the last would hide the
// call's writes). A range loop's variables are copied whenever captured,
// which is always safe.
func TestLoopVarEscape(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		edit, rule string // an edit containing edit; a diagnostic of rule
	}{
		{"called at once, body assigns", "for i := 0; i < 6; i++ {\n\t\tfunc() { _ = i }()\n\t\ti++\n\t}", "", ""},
		{"stored, body assigns", "var fs []func() int\n\tfor i := 0; i < 6; i++ {\n\t\tfs = append(fs, func() int { return i })\n\t\ti++\n\t}\n\t_ = fs", "", "loop-var"},
		{"address passed, closure stored", "var fs []func() int\n\tfor i := 0; i < 6; i++ {\n\t\tbump(&i)\n\t\tfs = append(fs, func() int { return i })\n\t}\n\t_ = fs", "", "loop-var"},
		{"address passed only", "for i := 0; i < 6; i++ {\n\t\tbump(&i)\n\t}", "", ""},
		{"field address kept", "var xs []*int\n\tfor _, p := range []point{{1, 2}} {\n\t\txs = append(xs, &p.X)\n\t}\n\t_ = xs", "p := p;", ""},
		{"method value kept", "var ms []func()\n\tfor _, p := range []point{{1, 2}} {\n\t\tms = append(ms, p.Move)\n\t}\n\t_ = ms", "", "method-value"},
		{"method value in a closure", "var ms []func()\n\tfor _, p := range []point{{1, 2}} {\n\t\tms = append(ms, func() { p.Move() })\n\t}\n\t_ = ms", "p := p;", ""},
		{"method called", "for _, p := range []point{{1, 2}} {\n\t\tp.Move()\n\t}", "", ""},
		{"called at once in a range loop", "for _, p := range []point{{1, 2}} {\n\t\tfunc() { _ = p }()\n\t}", "p := p;", ""},
		{"address passed in a range loop", "for _, p := range []point{{1, 2}} {\n\t\tkeep(&p)\n\t}", "p := p;", ""},
		{"go statement", "for _, p := range []point{{1, 2}} {\n\t\tgo func() { _ = p }()\n\t}", "p := p;", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := modesHead + "var f = func() any {\n\t" + tc.body + "\n\treturn nil\n}\n"
			r := check.New().File("x.go", []byte(src))
			if !r.Typed {
				t.Fatalf("does not type-check: %v", r.Diagnostics)
			}
			var rules []string
			for _, d := range r.Diagnostics {
				rules = append(rules, d.Rule)
			}
			if got := strings.Join(rules, ","); got != tc.rule {
				t.Errorf("diagnostics %v, want rule %q", r.Diagnostics, tc.rule)
			}
			var edits []string
			for _, e := range r.Edits {
				if strings.Contains(e.Text, ":=") {
					edits = append(edits, e.Text)
				}
			}
			if got := strings.Join(edits, ""); tc.edit == "" && got != "" || !strings.Contains(got, tc.edit) {
				t.Errorf("copies %q, want %q", got, tc.edit)
			}
		})
	}
}

// TestFmtTypesLog: log prints through fmt, and is checked alike.
func TestFmtTypesLog(t *testing.T) {
	src := "//go:build ignore\n\npackage main\n\nimport \"log\"\n\ntype item struct{ note string }\n\n" +
		"var f = func() any {\n\tlog.Printf(\"%+v\", item{})\n\treturn nil\n}\n"
	r := check.New().File("x.go", []byte(src))
	if len(r.Diagnostics) != 1 || r.Diagnostics[0].Rule != "fmt-types" || r.Diagnostics[0].Line != 10 {
		t.Fatalf("diagnostics: %v", r.Diagnostics)
	}
}

// TestModeRulesQuiet: the usual deferred calls and prints stay quiet.
func TestModeRulesQuiet(t *testing.T) {
	body := `var err error
	mu.Lock()
	defer mu.Unlock()
	done := make(chan bool)
	defer close(done)
	defer func() {
		if err != nil {
			_ = fmt.Sprint(err)
		}
	}()
	err = fmt.Errorf("x: %d", 1)
	p := point{1, 2}
	var e error = err
	for i := 0; i < 2; i++ {
		func() {
			defer fmt.Sprint(i)
		}()
	}
	return fmt.Sprintf("%v %d %s %T %+v %v", p, p.X, e, 3, p, []point{p})`
	src := modesHead + "var f = func() any {\n\t" + body + "\n}\n"
	if r := check.New().File("x.go", []byte(src)); len(r.Diagnostics) != 0 || !r.Typed {
		t.Fatalf("diagnostics: %v", r.Diagnostics)
	}
}
