package interp

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strings"

	"github.com/zealgo/zealgo/interp/check"
)

// Before a file is evaluated, its source is rewritten: go statements are
// guarded (goguard.go) and functions report their frames to a panic
// (tracerw.go). Every edit stays on one line, so line numbers hold; the
// columns that follow an edit on its line move, and a colMap moves them
// back for the positions of compile errors.

// edit replaces src[off:end] with text.
type edit struct {
	off, end int
	text     string
	kind     editKind
}

// editKind orders the edits at one offset: what closes an expression
// ending there, then statements, then what opens an expression starting
// there.
type editKind int

const (
	editClose editKind = iota
	editStmt
	editOpen
)

// rewrite returns src with the edits of the rewrites applied (the
// goroutine guard, the frame trace, and the fixes package check found)
// and the map from the result's columns back to src's, or src and nil
// when there is nothing to change. rt reports whether the result imports
// the run-time package (rtSymbols).
func rewrite(fset *token.FileSet, f *ast.File, src []byte, fixes []check.Edit, fixRT bool) (out []byte, cols *colMap, rt bool) {
	edits := append(goEdits(fset, f), traceEdits(fset, f)...)
	for _, e := range fixes {
		edits = append(edits, edit{e.Off, e.End, e.Text, fixKind(e.Text)})
	}
	if len(edits) == 0 {
		return src, nil, false
	}
	if len(edits) > len(fixes) || fixRT {
		edits = append(edits, importGuard(fset, f))
		rt = true
	}
	out, edits = applyEdits(src, edits)
	return out, &colMap{src: src, edits: edits}, rt
}

// fixKind orders a fix of package check among the other edits at its
// offset: one that closes an expression first, one that opens one last.
func fixKind(text string) editKind {
	if text != "" && strings.ContainsRune(")]}", rune(text[0])) {
		return editClose
	}
	return editOpen
}

// importGuard returns the edit that imports the run-time package: on the
// package clause's line, "package main; import ...", so that no line moves.
func importGuard(fset *token.FileSet, f *ast.File) edit {
	at := fset.File(f.Package).Offset(f.Name.End())
	return edit{at, at, "; import " + guardName + " " + fmt.Sprintf("%q", guardPath), editStmt}
}

// guardGoroutines returns the source of f, a file of an application
// package, with its go statements guarded (goEdits) and the fixes of
// package check applied, the run-time package imported when they need
// it, and whether it changed anything.
func guardGoroutines(fset *token.FileSet, f *ast.File, src []byte, fixes []check.Edit, fixRT bool) ([]byte, bool) {
	edits := goEdits(fset, f)
	if len(edits) == 0 && len(fixes) == 0 {
		return src, false
	}
	for _, e := range fixes {
		edits = append(edits, edit{e.Off, e.End, e.Text, fixKind(e.Text)})
	}
	if len(edits) > len(fixes) || fixRT {
		edits = append(edits, importGuard(fset, f))
	}
	out, _ := applyEdits(src, edits)
	return out, true
}

// applyEdits returns src with edits applied, and the edits it applied in
// order. Edits are sorted by offset, then by kind; at one offset and of
// one kind they keep their order (a goroutine's guard before its
// function's trace, a function's trace before its first line), an
// insertion before a replacement. An edit that overlaps the one before it
// is dropped.
func applyEdits(src []byte, edits []edit) ([]byte, []edit) {
	sort.SliceStable(edits, func(i, j int) bool {
		a, b := edits[i], edits[j]
		if a.off != b.off {
			return a.off < b.off
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.end == a.off && b.end > b.off
	})
	var b bytes.Buffer
	applied := edits[:0:0]
	last := 0
	for _, e := range edits {
		if e.off < last || e.end > len(src) {
			continue
		}
		b.Write(src[last:e.off])
		b.WriteString(e.text)
		last = e.end
		applied = append(applied, e)
	}
	b.Write(src[last:])
	return b.Bytes(), applied
}

// colMap maps a column of the rewritten source back to the source as
// written.
type colMap struct {
	src   []byte
	edits []edit // sorted by offset
}

// col returns the column in the source as written of column col of line
// line of the rewritten source; a column inside inserted text maps to
// where the text was inserted.
func (m *colMap) col(line, col int) int {
	if m == nil || line < 1 || col < 1 {
		return col
	}
	start, end := lineBounds(m.src, line)
	if start < 0 {
		return col
	}
	delta := 0 // how much further right the rewritten text is at this point
	for _, e := range m.edits {
		if e.off < start {
			continue
		}
		if e.off > end {
			break
		}
		at := e.off - start + 1 + delta // the edit's column in the rewritten line
		if col < at {
			break
		}
		if col < at+len(e.text) {
			return e.off - start + 1
		}
		delta += len(e.text) - (e.end - e.off)
	}
	return col - delta
}

// lineBounds returns the offsets of the first byte and of the newline (or
// the end) of line n of src, or -1, -1.
func lineBounds(src []byte, n int) (int, int) {
	start := 0
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src[start:], '\n')
		if j < 0 {
			return -1, -1
		}
		start += j + 1
	}
	end := bytes.IndexByte(src[start:], '\n')
	if end < 0 {
		return start, len(src)
	}
	return start, start + end
}
