package symbols_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/symbols"
)

// TestHostTableCurrent: every exported top-level name of host is in its
// symbol table, so that a handler file naming it compiles (a stale table
// is fixed by `go generate ./symbols`).
func TestHostTableCurrent(t *testing.T) {
	table := symbols.Symbols["github.com/zealgo/zealgo/host/host"]
	if table == nil {
		t.Fatal("no table for host")
	}
	files, err := filepath.Glob(filepath.Join("..", "host", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("host sources: %v", err)
	}
	var missing []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range exported(file) {
			if _, ok := table[name]; !ok {
				missing = append(missing, name)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("host names missing from the symbol table (run go generate ./symbols): %s", strings.Join(missing, ", "))
	}
}

// exported returns the exported package-level names file declares:
// funcs without a receiver, types, constants and variables; generic funcs
// and types are left out, as yaegi extract cannot export them.
func exported(file *ast.File) []string {
	var names []string
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() && d.Type.TypeParams == nil {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.TypeParams == nil {
						names = append(names, s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	return names
}
