package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"
)

// fixture is a package of four files: a.go and b.go reference each other
// (a loop), c.go references a.go only, a.go also d.go, d.go nothing. App has three
// methods in two files and two fields.
var fixture = map[string]string{
	"a.go": `package p
type App struct{ cfg int; w *Worker }
func (a *App) Start() { a.w = newWorker() }
func (a *App) Stop()  { _ = limit }
`,
	"b.go": `package p
type Worker struct{ app *App }
func newWorker() *Worker { return &Worker{} }
func (a *App) Run() { _ = a.cfg }
func (w *Worker) Do() { w.app.Stop() }
`,
	"c.go": `package p
func use(a *App) { a.Start() }
`,
	"d.go": `package p
const limit = 3
`,
}

func measureFixture(t *testing.T) report {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range []string{"a.go", "b.go", "c.go", "d.go"} {
		f, err := parser.ParseFile(fset, name, fixture[name], 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{}).Check("p", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	return measure(fset, files, info, pkg)
}

func TestMeasure(t *testing.T) {
	r := measureFixture(t)
	if len(r.Types) != 2 || r.Types[0].Name != "App" || r.Types[0].Methods != 3 ||
		!slices.Equal(r.Types[0].Files, []string{"a.go", "b.go"}) {
		t.Fatalf("types = %+v, want App first with 3 methods in a.go and b.go", r.Types)
	}
	if r.Types[1].Name != "Worker" || r.Types[1].Methods != 1 {
		t.Fatalf("types[1] = %+v, want Worker with 1 method", r.Types[1])
	}
	if r.Fields["App"] != 2 || r.Fields["Worker"] != 1 {
		t.Fatalf("fields = %v, want App 2 and Worker 1", r.Fields)
	}
	if !slices.Equal(r.Loop, []string{"a.go", "b.go"}) || r.FileCount != 4 {
		t.Fatalf("loop = %v of %d files, want [a.go b.go] of 4", r.Loop, r.FileCount)
	}
}

func TestLimits(t *testing.T) {
	r := measureFixture(t)
	loose := limits{maxMethods: 3, maxFiles: 2, app: "App", maxAppMethods: 3, maxAppFiles: 2, maxFields: 2, maxLoop: 0.5}
	var out strings.Builder
	if !write(&out, r, loose) {
		t.Fatalf("within the limits, write failed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "2 of 4 files (50%)") {
		t.Fatalf("report lacks the loop's share:\n%s", out.String())
	}
	for _, c := range []struct {
		name string
		set  func(*limits)
		want string
	}{
		{"app methods", func(l *limits) { l.maxAppMethods = 2 }, "App has 3 methods (at most 2)"},
		{"app files", func(l *limits) { l.maxAppFiles = 1 }, "App has methods in 2 files (at most 1)"},
		{"fields", func(l *limits) { l.maxFields = 1 }, "App has 2 fields (at most 1)"},
		{"loop", func(l *limits) { l.maxLoop = 0.4 }, "50% of the files are in one reference loop"},
		{"other type", func(l *limits) { l.maxMethods = 0 }, "Worker has 1 methods (at most 0)"},
	} {
		l := loose
		c.set(&l)
		out.Reset()
		if write(&out, r, l) || !strings.Contains(out.String(), "FAIL "+c.want) {
			t.Errorf("%s: want a failure %q, got:\n%s", c.name, c.want, out.String())
		}
	}
}

func TestEdges(t *testing.T) {
	r := measureFixture(t)
	var out strings.Builder
	writeEdges(&out, r)
	want := "loop a.go -> b.go: Worker newWorker\n" +
		"     a.go -> d.go: limit\n" +
		"loop b.go -> a.go: App Stop cfg\n" +
		"     c.go -> a.go: App Start\n"
	if out.String() != want {
		t.Fatalf("edges:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestHost measures the real host package, as CI would.
func TestHost(t *testing.T) {
	if testing.Short() {
		t.Skip("loads and type-checks host")
	}
	// go list -export builds as .ci/run's archcheck and build do
	// (testutil.BuildStatic): with the cgo the race detector needs, it
	// compiled host and every package under it a second way (a minute
	// in CI on a cold cache).
	t.Setenv("CGO_ENABLED", "0")
	r, err := load("github.com/zealgo/zealgo/host", limits{forbid: defaultForbid, maxCompiled: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.FileCount == 0 || r.Fields["App"] == 0 || len(r.Loop) == 0 {
		t.Fatalf("host measured empty: %d files, App %d fields, loop %v", r.FileCount, r.Fields["App"], r.Loop)
	}
	// What issue 27 cut stays cut: the edge and the live hub get what they
	// need of the request path through their setup, and only App.Run
	// (app_running.go) reaches the command line (docs/internals.md).
	for _, f := range []string{"edge.go", "live_hub.go", "websocket.go", "sse.go"} {
		if slices.Contains(r.Loop, f) {
			t.Errorf("%s is in host's largest reference loop (archcheck -edges | grep '^loop %s')", f, f)
		}
	}
	// What a handler file's package reads of host stays small (host.rtOf):
	// no road from an exported name to the running server, nats-server or
	// the interpreter's cache, and few generic instantiations.
	for _, f := range r.Reach.Forbidden {
		t.Errorf("an exported name of host leads to %s", f)
	}
	if n := len(r.Reach.Generic); n > 20 {
		t.Errorf("host's exported names lead to %d generic instantiations, want at most 20: %v", n, r.Reach.Generic)
	}
	isCLI := func(f string) bool { return f == "cli.go" || strings.HasPrefix(f, "cli_") }
	for from, tos := range r.Refs {
		if isCLI(from) || from == "app_running.go" {
			continue
		}
		for to, names := range tos {
			if isCLI(to) {
				t.Errorf("%s uses %v of %s: only App.Run (app_running.go) reaches the command line", from, names, to)
			}
		}
	}
}

// reachFixture is a package whose exported API leads, through an
// unexported field, to a generic instantiation and to core; Handle
// holds its core as an any and leads to neither.
const reachFixture = `package p
type Box[T any] struct{ v T }
func (b *Box[T]) Get() T { return b.v }
type core struct{ cache Box[int] }
type App struct{ rt *core }
type Handle struct{ rt any }
func (h *Handle) Name(s string) string { return s }
func (a *App) hidden(c core) {}
`

func checkFixture(t *testing.T, src string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := (&types.Config{}).Check("p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func TestReach(t *testing.T) {
	pkg := checkFixture(t, reachFixture)
	r := reach(pkg, []string{"p.core"})
	if want := []string{"p.core: App > * > App.hidden() > param"}; !slices.Equal(r.Forbidden, want) {
		t.Fatalf("forbidden = %q, want %q", r.Forbidden, want)
	}
	// core is not walked past: its Box[int] is not reached.
	if len(r.Generic) != 0 {
		t.Fatalf("generic = %v past a forbidden type, want none", r.Generic)
	}
	r = reach(pkg, nil)
	if !slices.Equal(r.Generic, []string{"p.Box[int]"}) || len(r.Forbidden) != 0 {
		t.Fatalf("without forbidden types: generic %v, forbidden %v, want [p.Box[int]] and none", r.Generic, r.Forbidden)
	}
	if r := reach(pkg, []string{"p/"}); len(r.Forbidden) != 3 { // the exported types, reached first
		t.Fatalf("a forbidden package: %q, want App, Box and Handle", r.Forbidden)
	}
	var out strings.Builder
	l := limits{maxGeneric: 0, maxCompiled: 10}
	write(&out, report{Reach: reach(pkg, []string{"p.core"}), Compiled: 11, CompiledFrom: []string{"   11 p.Box"}}, l)
	for _, want := range []string{
		"FAIL an exported name leads to p.core: App > * > App.hidden() > param",
		"FAIL a package calling every exported func and method compiles 11 functions again (at most 10), most from:\n   11 p.Box",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestProbeSource(t *testing.T) {
	pkg := checkFixture(t, reachFixture+`
func New(opts ...string) *App { return nil }
func Of[T any](a *App) T { var z T; return z }
func Secret(c core) {}
`)
	src, n := probeSource(pkg, "probe")
	for _, want := range []string{
		"package probe\n", `p0 "p"`,
		"func f0(x *p0.Handle) { x.Name(*new(string)) }",
		"func f1() { p0.New(*new([]string)...) }",
		"func f2() { _ = p0.Of[int] }",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("probe lacks %q:\n%s", want, src)
		}
	}
	if n != 3 || strings.Contains(src, "Secret") {
		t.Errorf("%d funcs, want 3 (Secret takes an unexported type):\n%s", n, src)
	}
}

func TestCountFuncs(t *testing.T) {
	nm := `  4a0 T probe.f0
  4b0 T sync/atomic.(*Pointer[error]).Load
  4c0 T sync/atomic.(*Pointer[error]).Store
  4d0 T type:.eq.sync/atomic.Pointer[error]
  4e0 T go.shape.5614d7.Align
  4e8 T type:.eq.[32]sync/atomic.Pointer[error]
  4f0 R go:string.x
     U runtime.morestack
`
	n, from, err := countFuncs(nm, "probe.")
	if err != nil || n != 5 {
		t.Fatalf("%d, %v: want 5", n, err)
	}
	want := []string{"    4 sync/atomic.Pointer", "    1 go.shape (the methods of shape types)"}
	if !slices.Equal(from, want) {
		t.Fatalf("from %q, want %q", from, want)
	}
}
