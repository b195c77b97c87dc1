package interp

import (
	"errors"

	"github.com/zealgo/zealgo/interp/check"
)

// fix holds the application packages to the standard of the file that
// imports them: package check checks each package as a whole, and each
// file's source becomes what Yaegi compiles, the check's fixes applied
// (map[string]any values with methods, error types, JSON tags, ...) and
// its go statements guarded. It returns the problems check found, each
// at its package file's position.
func (l *loader) fix(c *check.Checker) []check.Diagnostic {
	var out []check.Diagnostic
	for i := 0; i < len(l.files); {
		ip := l.importPath(l.files[i].rel)
		j := i
		var files []check.PackageFile
		for ; j < len(l.files) && l.importPath(l.files[j].rel) == ip; j++ {
			pf := l.files[j]
			files = append(files, check.PackageFile{Path: pf.rel, Src: pf.src, File: pf.file})
		}
		for k, r := range c.Package(ip, l.fset, files, l) {
			out = append(out, r.Diagnostics...)
			pf := l.files[i+k]
			if src, ok := guardGoroutines(l.fset, pf.file, pf.src, r.Edits, r.UsesRT); ok {
				pf.src, l.guarded = src, true
			}
		}
		i = j
	}
	return out
}

// libProblem returns the first problem of diags that keeps a package file
// from compiling under the interpreter, as an Error of that file imported
// by path, or nil.
func libProblem(diags []check.Diagnostic, path string) *Error {
	for _, d := range diags {
		if d.Line != 0 && compileRules[d.Rule] {
			return importedBy(&Error{File: d.File, Line: d.Line, Col: d.Col, Msg: d.Msg, Rule: d.Rule}, path)
		}
	}
	return nil
}

// explainLib is explain, and when the file's own problems do not account
// for err, the first problem of the packages it imports that keeps them
// from compiling: Yaegi reports such a trap without the package file's
// position (a panic "nil type", an error at a line of its own making).
func explainLib(err error, res *check.Result, lib []check.Diagnostic) error {
	if x := explain(err, res); x != err {
		return x
	}
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	if own := libProblem(lib, e.File); own != nil {
		return own
	}
	return err
}
