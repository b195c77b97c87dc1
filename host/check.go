package host

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/zealgo/zealgo/interp"
	"github.com/zealgo/zealgo/interp/check"
)

// `zealgo check`: package check type-checks each file against the symbols
// the application links and applies the interpreter's trap rules; the
// host then compiles a file with no such error as the server would, for
// what only it knows (the handler funcs a file must declare, their
// signatures, its middleware list); templates are parsed too.

// checkSummary prints the last line of check and returns its exit status:
// 1 on errors (and, with strict, on warnings), else 0. A warning is a
// file that runs, but not alike interpreted and built (docs/modes.md). With
// tiered, a construct only compiled Go runs is no error: the file runs
// compiled only (docs/tiered.md).
func checkSummary(stderr io.Writer, problems []check.Diagnostic, files int, strict, tiered bool) int {
	warnings, compiled := 0, map[string]bool{}
	for _, p := range problems {
		switch severity(p, tiered) {
		case "warning":
			warnings++
		case sevCompiledOnly:
			compiled[p.File] = true
		}
	}
	errs := len(problems) - warnings
	for _, p := range problems {
		if severity(p, tiered) == sevCompiledOnly {
			errs--
		}
	}
	if len(compiled) > 0 {
		fmt.Fprintf(stderr, "zealgo check: %d file(s) run compiled only: zealgo serve builds them natively (docs/tiered.md)\n", len(compiled))
	}
	switch {
	case errs == 0 && warnings == 0:
		fmt.Fprintf(stderr, "zealgo check: %d file(s) ok\n", files)
		return 0
	case errs == 0:
		fmt.Fprintf(stderr, "zealgo check: %d problem(s) in %d file(s): %d warning(s), no error "+
			"(a warning runs, but not as built code would: see docs/modes.md)\n", warnings, files, warnings)
		if strict {
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "zealgo check: %d problem(s) in %d file(s): %d error(s), %d warning(s)\n", errs+warnings, files, errs, warnings)
	return 1
}

// sevCompiledOnly is the severity of a construct only compiled Go runs,
// when tiered serve can build the file natively.
const sevCompiledOnly = "compiled-only"

// severity is how check counts p: "error", "warning", or sevCompiledOnly.
func severity(p check.Diagnostic, tiered bool) string {
	switch {
	case check.IsWarning(p.Rule):
		return "warning"
	case tiered && check.CompiledOnly(p):
		return sevCompiledOnly
	}
	return "error"
}

// checkLine is a problem as check prints it.
func checkLine(p check.Diagnostic, tiered bool) string {
	if severity(p, tiered) == sevCompiledOnly {
		return p.String() + " [compiled only: zealgo serve runs this file from its native build]"
	}
	return p.String()
}

// checkJSON is the output of check --json.
type checkJSON struct {
	Files    int            `json:"files"`
	Problems []checkProblem `json:"problems"`
}

type checkProblem struct {
	check.Diagnostic
	// Severity is "error" (the file does not compile, or panics where the
	// problem is), "warning" (it runs, but not as compiled Go would) or
	// "compiled-only" (only compiled Go runs it: tiered serve does, once
	// its native build includes the file).
	Severity string `json:"severity"`
}

func writeCheckJSON(w io.Writer, problems []check.Diagnostic, files int, tiered bool) {
	out := checkJSON{Files: files, Problems: []checkProblem{}}
	for _, p := range problems {
		out.Problems = append(out.Problems, checkProblem{p, severity(p, tiered)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(out)
}

// checkAll checks a's files and templates with a loader of its own.
func checkAll(a *App) (problems []check.Diagnostic, files int, err error) {
	if err := a.prepare(); err != nil {
		return nil, 0, err
	}
	defer checkCredentials(&a.cfg)()
	rt := rtOf(a)
	l := newLoader(a, &rt.ops, &rt.db, nil)
	l.checking = true
	seen := map[check.Diagnostic]bool{} // a problem of a package (lib/...), once for all its importers
	for _, dir := range []string{a.dirs.api, a.dirs.public, a.dirs.task} {
		paths, err := goFiles(dir)
		if err != nil {
			return nil, files, err
		}
		for _, path := range paths {
			files++
			for _, d := range l.checkFile(dir, path) {
				if d.File != l.dirs.rel(path) && seen[d] {
					continue
				}
				seen[d] = true
				problems = append(problems, d)
			}
		}
	}
	if setup := filepath.Join(a.dirs.root, setupFileName); fileExists(setup) { // setupfile.go
		files++
		problems = append(problems, l.checkFile(a.dirs.root, setup)...)
	}
	problems = append(problems, routeConflicts(a)...)
	tpl, n, err := check.Templates(a.dirs.root)
	if err != nil {
		return nil, files, fmt.Errorf("zealgo: templates: %w", err)
	}
	return append(problems, tpl...), files + n, nil
}

// routeConflicts returns the levels of api/ and public/ that hold two
// route parameter names (routetree.go).
func routeConflicts(a *App) []check.Diagnostic {
	var out []check.Diagnostic
	for _, d := range []struct{ root, prefix string }{{a.dirs.api, "api"}, {a.dirs.public, "public"}} {
		t := &routeTree{root: d.root, prefix: d.prefix, log: a.log, dirs: map[string]*routeDir{}, watched: map[string]bool{}}
		for _, c := range t.conflicts() {
			out = append(out, check.Diagnostic{File: c.file, Rule: "host", Msg: c.msg})
		}
	}
	return out
}

// checkCredentials gives the basic-auth alias a random credential for the
// length of a check when none is configured, so that a file using it
// checks without the secrets (the middleware check builds never serves).
// It returns the func that takes the credential back.
func checkCredentials(cfg *Config) func() {
	if len(cfg.BasicAuth) > 0 || os.Getenv(BasicAuthEnv) != "" {
		return func() {}
	}
	saved := cfg.BasicAuth
	cfg.BasicAuth = map[string]string{"zealgo-check": rand.Text()}
	return func() { cfg.BasicAuth = saved }
}

// checkFile returns the problems of one file: those of package check, then
// the host's own when the file compiles.
func (l *loader) checkFile(dir, path string) []check.Diagnostic {
	rel := l.dirs.rel(path)
	src, err := os.ReadFile(path)
	if err != nil {
		return []check.Diagnostic{{File: rel, Rule: "host", Msg: err.Error()}}
	}
	out := interp.CheckFile(rel, src, interp.Options{Symbols: l.app.symbols, Module: l.dirs.module}).Diagnostics
	for _, d := range out {
		if !check.IsWarning(d.Rule) {
			return out // the host's checks wait until the file compiles
		}
	}
	if msg := l.hostProblem(dir, path); msg != "" {
		out = append(out, parseProblem(msg))
	}
	return out
}

// hostProblem compiles one file as the server would and returns what
// keeps it from serving, or "".
func (l *loader) hostProblem(dir, path string) string {
	prog, rel, err := l.compile(dir, path)
	if err == nil && dir == l.dirs.task {
		return l.checkTask(prog, rel)
	}
	if err == nil && dir == l.dirs.root { // setup.go
		if _, err := setupFunc(interpVars{prog}); err != nil {
			return strings.TrimPrefix(err.Error(), "zealgo: ")
		}
		return ""
	}
	if err == nil {
		_, err = l.analyze(prog, rel)
	}
	if err == nil {
		return ""
	}
	if rel == "" {
		rel = l.dirs.rel(path)
	}
	e := loadError(l.log, err, rel)
	if strings.HasPrefix(e.Hint, rel+":") {
		return e.Hint // the message names the file (and its position) itself
	}
	if e.Code == CodeCompileError {
		return rel + ": " + e.Hint // a problem in a package the file imports
	}
	if rest, ok := strings.CutPrefix(e.Hint, rel+" "); ok {
		return rel + ": " + rest // "api/x.go defines no handler: ..."
	}
	return rel + ": " + e.Hint
}

// checkTask checks that a task file holds a func named after the file.
func (l *loader) checkTask(prog *interp.Program, rel string) string {
	if _, err := l.analyzeTask(prog, rel); err != nil {
		return err.Error()
	}
	return ""
}

// parseProblem turns "file:line:col: message" or "file: message" back
// into a Diagnostic.
func parseProblem(s string) check.Diagnostic {
	if m := problemPos.FindStringSubmatch(s); m != nil {
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		return check.Diagnostic{File: m[1], Line: line, Col: col, Rule: "host", Msg: m[4]}
	}
	file, msg, ok := cutProblem(s)
	if !ok {
		return check.Diagnostic{Rule: "host", Msg: s}
	}
	return check.Diagnostic{File: file, Rule: "host", Msg: msg}
}

var problemFile = regexp.MustCompile(`^(\S+?\.go): (.*)$`)

func cutProblem(s string) (file, msg string, ok bool) {
	m := problemFile.FindStringSubmatch(s)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}
