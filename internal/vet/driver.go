package vet

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"reflect"

	"github.com/zealgo/zealgo/interp/check"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/appends"
	"golang.org/x/tools/go/analysis/passes/assign"
	"golang.org/x/tools/go/analysis/passes/atomic"
	"golang.org/x/tools/go/analysis/passes/bools"
	"golang.org/x/tools/go/analysis/passes/composite"
	"golang.org/x/tools/go/analysis/passes/copylock"
	"golang.org/x/tools/go/analysis/passes/defers"
	"golang.org/x/tools/go/analysis/passes/directive"
	"golang.org/x/tools/go/analysis/passes/errorsas"
	"golang.org/x/tools/go/analysis/passes/hostport"
	"golang.org/x/tools/go/analysis/passes/httpresponse"
	"golang.org/x/tools/go/analysis/passes/ifaceassert"
	"golang.org/x/tools/go/analysis/passes/loopclosure"
	"golang.org/x/tools/go/analysis/passes/lostcancel"
	"golang.org/x/tools/go/analysis/passes/nilfunc"
	"golang.org/x/tools/go/analysis/passes/printf"
	"golang.org/x/tools/go/analysis/passes/shift"
	"golang.org/x/tools/go/analysis/passes/sigchanyzer"
	"golang.org/x/tools/go/analysis/passes/slog"
	"golang.org/x/tools/go/analysis/passes/stdmethods"
	"golang.org/x/tools/go/analysis/passes/stdversion"
	"golang.org/x/tools/go/analysis/passes/stringintconv"
	"golang.org/x/tools/go/analysis/passes/structtag"
	"golang.org/x/tools/go/analysis/passes/testinggoroutine"
	"golang.org/x/tools/go/analysis/passes/tests"
	"golang.org/x/tools/go/analysis/passes/timeformat"
	"golang.org/x/tools/go/analysis/passes/unmarshal"
	"golang.org/x/tools/go/analysis/passes/unreachable"
	"golang.org/x/tools/go/analysis/passes/unsafeptr"
	"golang.org/x/tools/go/analysis/passes/unusedresult"
	"golang.org/x/tools/go/analysis/passes/waitgroup"
)

// Analyzers are the analyzers go vet runs (go tool vet help), less those
// that read assembly or cgo files and buildtag, which would question the
// //go:build ignore every handler file carries. None reports an unused
// package-level variable, so the handler variables (var get = func...)
// draw nothing.
var Analyzers = []*analysis.Analyzer{
	appends.Analyzer, assign.Analyzer, atomic.Analyzer, bools.Analyzer,
	composite.Analyzer, copylock.Analyzer, defers.Analyzer, directive.Analyzer,
	errorsas.Analyzer, hostport.Analyzer, httpresponse.Analyzer, ifaceassert.Analyzer,
	loopclosure.Analyzer, lostcancel.Analyzer, nilfunc.Analyzer, printf.Analyzer,
	shift.Analyzer, sigchanyzer.Analyzer, slog.Analyzer, stdmethods.Analyzer,
	stdversion.Analyzer, stringintconv.Analyzer, structtag.Analyzer,
	testinggoroutine.Analyzer, tests.Analyzer, timeformat.Analyzer, unmarshal.Analyzer,
	unreachable.Analyzer, unsafeptr.Analyzer, unusedresult.Analyzer, waitgroup.Analyzer,
}

// unit is one type-checked file, the package the driver analyses.
type unit struct {
	fset  *token.FileSet
	file  file
	pkg   *types.Package
	info  *types.Info
	sizes types.Sizes

	results map[*analysis.Analyzer]any
	facts   map[factKey]analysis.Fact
	diags   []check.Diagnostic
}

// run runs Analyzers and what they require over u, each once, a
// requirement before what requires it.
func run(u *unit) ([]check.Diagnostic, error) {
	u.results = map[*analysis.Analyzer]any{}
	u.facts = map[factKey]analysis.Fact{}
	for _, a := range Analyzers {
		if err := u.analyze(a, Analyzers); err != nil {
			return nil, err
		}
	}
	return u.diags, nil
}

// analyze runs a after its requirements, unless it ran; only the
// analyzers of report (not mere requirements) report diagnostics.
func (u *unit) analyze(a *analysis.Analyzer, report []*analysis.Analyzer) error {
	if _, done := u.results[a]; done {
		return nil
	}
	resultOf := map[*analysis.Analyzer]any{}
	for _, req := range a.Requires {
		if err := u.analyze(req, nil); err != nil {
			return err
		}
		resultOf[req] = u.results[req]
	}
	pass := u.pass(a, resultOf, contains(report, a))
	res, err := a.Run(pass)
	if err != nil {
		return fmt.Errorf("zealgo: vet: %s: %s: %w", u.file.path, a.Name, err)
	}
	u.results[a] = res
	return nil
}

func contains(list []*analysis.Analyzer, a *analysis.Analyzer) bool {
	for _, b := range list {
		if b == a {
			return true
		}
	}
	return false
}

// pass builds the Pass of a over u.
func (u *unit) pass(a *analysis.Analyzer, resultOf map[*analysis.Analyzer]any, report bool) *analysis.Pass {
	return &analysis.Pass{
		Analyzer:   a,
		Fset:       u.fset,
		Files:      []*ast.File{u.file.ast},
		Pkg:        u.pkg,
		TypesInfo:  u.info,
		TypesSizes: u.sizes,
		ResultOf:   resultOf,
		ReadFile:   os.ReadFile,
		Report: func(d analysis.Diagnostic) {
			if report {
				u.diags = append(u.diags, diag(u.fset, u.file.path, d.Pos, a.Name, d.Message))
			}
		},
		ImportObjectFact: func(obj types.Object, f analysis.Fact) bool {
			return u.getFact(obj, f)
		},
		ExportObjectFact: func(obj types.Object, f analysis.Fact) {
			u.facts[factKey{obj, reflect.TypeOf(f)}] = f
		},
		ImportPackageFact: func(_ *types.Package, f analysis.Fact) bool {
			return u.getFact(nil, f)
		},
		ExportPackageFact: func(f analysis.Fact) {
			u.facts[factKey{nil, reflect.TypeOf(f)}] = f
		},
		AllObjectFacts:  func() []analysis.ObjectFact { return u.objectFacts() },
		AllPackageFacts: func() []analysis.PackageFact { return u.packageFacts() },
	}
}

// getFact copies the fact of obj of f's type into f; facts of imported
// packages are unknown (each file is vetted alone).
func (u *unit) getFact(obj types.Object, f analysis.Fact) bool {
	got, ok := u.facts[factKey{obj, reflect.TypeOf(f)}]
	if ok {
		reflect.ValueOf(f).Elem().Set(reflect.ValueOf(got).Elem())
	}
	return ok
}

func (u *unit) objectFacts() []analysis.ObjectFact {
	var out []analysis.ObjectFact
	for k, f := range u.facts {
		if k.obj != nil {
			out = append(out, analysis.ObjectFact{Object: k.obj, Fact: f})
		}
	}
	return out
}

func (u *unit) packageFacts() []analysis.PackageFact {
	var out []analysis.PackageFact
	for k, f := range u.facts {
		if k.obj == nil {
			out = append(out, analysis.PackageFact{Package: u.pkg, Fact: f})
		}
	}
	return out
}

// factKey names a fact: of an object (obj set) or of the package.
type factKey struct {
	obj types.Object
	typ reflect.Type
}
