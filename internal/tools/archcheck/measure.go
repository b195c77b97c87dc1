package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"sort"
)

// typeStat is what the check counts for one named type: its methods and
// the files they are declared in.
type typeStat struct {
	Name    string
	Methods int
	Files   []string // base names, sorted
}

// report is the measure of one package.
type report struct {
	Types     []typeStat // by methods, most first
	Fields    map[string]int
	FileCount int      // the package's files
	Loop      []string // the largest reference loop, base names, sorted
	Refs      graph    // the file-level reference graph

	Reach        reachReport // what the exported names lead to (reach.go)
	Compiled     int         // functions the probe compiled again (probe.go); -1: not measured
	CompiledFrom []string    // where they come from, counted, most first
}

// graph maps each file to the files it references, each with the names
// it uses from there, sorted.
type graph map[string]map[string][]string

// measure counts methods and files per named type, the fields of each
// struct type, and finds the largest strongly connected component of the
// file-level reference graph: file A references file B when an identifier
// used in A is declared in B (a package-level name, a method or a field).
func measure(fset *token.FileSet, files []*ast.File, info *types.Info, pkg *types.Package) report {
	r := report{Fields: map[string]int{}, FileCount: len(files)}
	r.Types = methodStats(fset, files, info)
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if tn, ok := scope.Lookup(name).(*types.TypeName); ok {
			if st, ok := tn.Type().Underlying().(*types.Struct); ok {
				r.Fields[name] = st.NumFields()
			}
		}
	}
	r.Refs = referenceGraph(fset, files, info, pkg)
	r.Loop = largestLoop(r.Refs)
	return r
}

// methodStats counts the methods declared on each named type.
func methodStats(fset *token.FileSet, files []*ast.File, info *types.Info) []typeStat {
	byType := map[string]*typeStat{}
	seen := map[string]map[string]bool{}
	for _, f := range files {
		file := filepath.Base(fset.File(f.Pos()).Name())
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			name := recvName(info, fd)
			if name == "" {
				continue
			}
			s := byType[name]
			if s == nil {
				s = &typeStat{Name: name}
				byType[name], seen[name] = s, map[string]bool{}
			}
			s.Methods++
			if !seen[name][file] {
				seen[name][file] = true
				s.Files = append(s.Files, file)
			}
		}
	}
	out := make([]typeStat, 0, len(byType))
	for _, s := range byType {
		sort.Strings(s.Files)
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Methods != out[j].Methods {
			return out[i].Methods > out[j].Methods
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// recvName returns the name of the type a method is declared on.
func recvName(info *types.Info, fd *ast.FuncDecl) string {
	obj, ok := info.Defs[fd.Name].(*types.Func)
	if !ok {
		return ""
	}
	recv := obj.Type().(*types.Signature).Recv()
	if recv == nil {
		return ""
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return ""
}

// referenceGraph maps each file to the files it references and the names
// it uses from each.
func referenceGraph(fset *token.FileSet, files []*ast.File, info *types.Info, pkg *types.Package) graph {
	g := graph{}
	for _, f := range files {
		from := filepath.Base(fset.File(f.Pos()).Name())
		g[from] = map[string][]string{}
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := info.Uses[id]
			if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
				return true
			}
			if _, local := obj.(*types.PkgName); local {
				return true
			}
			to := filepath.Base(fset.File(obj.Pos()).Name())
			if to != from && !slices.Contains(g[from][to], id.Name) {
				g[from][to] = append(g[from][to], id.Name)
			}
			return true
		})
		for _, names := range g[from] {
			sort.Strings(names)
		}
	}
	return g
}

// largestLoop returns the largest strongly connected component of g
// (Tarjan's algorithm), sorted; a component of one file is no loop.
func largestLoop(g graph) []string {
	nodes := make([]string, 0, len(g))
	for n := range g {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	t := tarjan{g: g, index: map[string]int{}, low: map[string]int{}, on: map[string]bool{}}
	for _, n := range nodes {
		if _, ok := t.index[n]; !ok {
			t.visit(n)
		}
	}
	var best []string
	for _, c := range t.comps {
		if len(c) > 1 && len(c) > len(best) {
			best = c
		}
	}
	sort.Strings(best)
	return best
}

type tarjan struct {
	g     graph
	index map[string]int
	low   map[string]int
	on    map[string]bool
	stack []string
	next  int
	comps [][]string
}

func (t *tarjan) visit(v string) {
	t.index[v], t.low[v] = t.next, t.next
	t.next++
	t.stack = append(t.stack, v)
	t.on[v] = true
	succ := make([]string, 0, len(t.g[v]))
	for w := range t.g[v] {
		succ = append(succ, w)
	}
	sort.Strings(succ)
	for _, w := range succ {
		if _, ok := t.index[w]; !ok {
			t.visit(w)
			t.low[v] = min(t.low[v], t.low[w])
		} else if t.on[w] {
			t.low[v] = min(t.low[v], t.index[w])
		}
	}
	if t.low[v] != t.index[v] {
		return
	}
	var comp []string
	for {
		w := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.on[w] = false
		comp = append(comp, w)
		if w == v {
			break
		}
	}
	t.comps = append(t.comps, comp)
}
