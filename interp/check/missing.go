package check

import (
	"go/types"
	"strings"
)

// hostPath is the import path of the host package, whose absence from the
// symbol tables means the application forgot app.Symbols(symbols.Symbols).
const hostPath = "github.com/zealgo/zealgo/host"

// unlinkedPackages says what to do instead of importing a standard package
// that the interpreter does not link.
var unlinkedPackages = map[string]string{
	"os/exec": "interpreted files cannot start processes; run the command from compiled code " +
		"(a package of the application whose symbols it registers with app.Symbols)",
	"unsafe":  "do without it, or move the code into a compiled package registered with app.Symbols",
	"syscall": "use the os, net and time packages, or a compiled package registered with app.Symbols",
	"plugin":  "register compiled packages with app.Symbols instead",
	"iter": "write the func types it names out: func(yield func(V) bool) and func(yield func(K, V) bool) " +
		"(and call such a func with a yield func: range over a func is not supported)",
	"embed": "read the file at run time (os.ReadFile) or keep it under template/ or public/",
}

// unlinkedMsg says why path cannot be imported and what to do instead.
func unlinkedMsg(path string) string {
	if path == hostPath {
		return "package " + path + " is not linked into this binary: the application must register the host symbols with app.Symbols(symbols.Symbols)"
	}
	if !isStd(path) {
		return "package " + path + " is not linked into this binary: interpreted files can import only the standard library and the packages " +
			"whose symbol tables (yaegi extract) the application registers with app.Symbols; run the application's own binary (e.g. go run ./sample check)"
	}
	if hint, ok := unlinkedPackages[path]; ok {
		return "package " + path + " is not available in interpreted files: " + hint
	}
	return "package " + path + " is not available in interpreted files: the interpreter has the standard library of Go 1.22; " +
		"use a compiled package that the application registers with app.Symbols"
}

// isStd reports whether path looks like a standard library path (no dot
// in its first element).
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// missingSymbols says what to write instead of a name of the standard
// library that interpreted files cannot use: absent from Yaegi's tables (newer
// than Go 1.22, or generic), or present in its generic source but failing
// when run (measured with Yaegi v0.16.1: see interp's TestBrokenGenerics).
var missingSymbols = map[string]string{
	"sync.OnceValue":  "use a sync.Once and a variable: once.Do(func() { v = compute() })",
	"sync.OnceValues": "use a sync.Once and variables: once.Do(func() { v, err = compute() })",
	"sync.OnceFunc":   "use a sync.Once: once.Do(f)",

	"sync/atomic.Pointer": "use atomic.Value (v.Store(p); p, _ := v.Load().(*T)) or a sync.Mutex",

	"maps.Keys":    "collect them in a loop: for k := range m { keys = append(keys, k) }",
	"maps.Values":  "collect them in a loop: for _, v := range m { values = append(values, v) }",
	"maps.All":     "range over the map itself",
	"maps.Collect": "fill a map in a loop",
	"maps.Insert":  "set the keys in a loop",
	"maps.Clone":   "copy in a loop: c := make(map[K]V, len(m)); for k, v := range m { c[k] = v }",

	"slices.Sort":             "use sort.Strings, sort.Ints, sort.Float64s, or sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })",
	"slices.SortFunc":         "use sort.Slice(s, func(i, j int) bool { return less(s[i], s[j]) })",
	"slices.SortStableFunc":   "use sort.SliceStable(s, func(i, j int) bool { return less(s[i], s[j]) })",
	"slices.IsSorted":         "use sort.SliceIsSorted(s, func(i, j int) bool { return s[i] < s[j] })",
	"slices.IsSortedFunc":     "use sort.SliceIsSorted(s, func(i, j int) bool { return less(s[i], s[j]) })",
	"slices.BinarySearch":     "use sort.Search(len(s), func(i int) bool { return s[i] >= x })",
	"slices.BinarySearchFunc": "use sort.Search(len(s), func(i int) bool { return cmp(s[i], x) >= 0 })",
	"slices.Min":              "find it in a loop",
	"slices.MinFunc":          "find it in a loop",
	"slices.Max":              "find it in a loop",
	"slices.MaxFunc":          "find it in a loop",
	"slices.Delete":           "use s = append(s[:i], s[j:]...)",
	"slices.DeleteFunc":       "keep what you want in a loop: out := s[:0]; for _, x := range s { if !del(x) { out = append(out, x) } }",
	"slices.Replace":          "use append(append(s[:i:i], v...), s[j:]...)",
	"slices.Compact":          "skip each element equal to the one before it in a loop",
	"slices.CompactFunc":      "skip each element equal to the one before it in a loop",
	"slices.Concat":           "use append(append([]T(nil), a...), b...)",
	"slices.All":              "range over the slice itself",
	"slices.Values":           "range over the slice itself",
	"slices.Backward":         "use for i := len(s) - 1; i >= 0; i--",
	"slices.Collect":          "fill a slice in a loop",
	"slices.AppendSeq":        "append in a loop",
	"slices.Sorted":           "copy the values into a slice and sort it with sort.Slice",
	"slices.SortedFunc":       "copy the values into a slice and sort it with sort.Slice",
	"slices.SortedStableFunc": "copy the values into a slice and sort it with sort.SliceStable",
	"slices.Chunk":            "slice it in a loop: for i := 0; i < len(s); i += n { ... }",
	"slices.Repeat":           "append in a loop",

	"strings.Lines":     "use strings.Split(s, \"\\n\")",
	"strings.SplitSeq":  "use strings.Split",
	"strings.FieldsSeq": "use strings.Fields",
	"bytes.Lines":       "use bytes.Split(b, []byte(\"\\n\"))",
	"bytes.SplitSeq":    "use bytes.Split",
	"bytes.FieldsSeq":   "use bytes.Fields",
	"reflect.TypeFor":   "use reflect.TypeOf((*T)(nil)).Elem()",
}

// newerMembers says what to write instead of methods added to the standard
// library after Go 1.22, by "package.Type.Method".
var newerMembers = map[string]string{
	"*sync.WaitGroup.Go": "WaitGroup.Go is newer than the interpreter's Go 1.22; write wg.Add(1); go func() { defer wg.Done(); f() }()",
	"sync.WaitGroup.Go":  "WaitGroup.Go is newer than the interpreter's Go 1.22; write wg.Add(1); go func() { defer wg.Done(); f() }()",
	"*sync.Map.Clear":    "Map.Clear is newer than the interpreter's Go 1.22; delete the keys in m.Range",
	"sync.Map.Clear":     "Map.Clear is newer than the interpreter's Go 1.22; delete the keys in m.Range",
}

// missingMsg says what to write instead of pkg.name, which the package at
// path lacks under the interpreter.
func missingMsg(local, path, name string, pkg *types.Package) string {
	q := local + "." + name
	if hint, ok := missingSymbols[path+"."+name]; ok {
		return q + " is not available in interpreted files; " + hint
	}
	if s := Suggest(name, exportedNames(pkg)); s != "" {
		return "undefined: " + q + "; did you mean " + local + "." + s + "?"
	}
	if isStd(path) {
		return q + " is not available in interpreted files: the interpreter has the standard library of Go 1.22 " +
			"(without the generic funcs it cannot run); write it out, or use a compiled package registered with app.Symbols"
	}
	return "undefined: " + q + ": the symbol table of " + path + " has no " + name + " (regenerate it with go generate if the package has it)"
}

func exportedNames(pkg *types.Package) []string {
	var out []string
	for _, n := range pkg.Scope().Names() {
		if strings.ToUpper(n[:1]) == n[:1] {
			out = append(out, n)
		}
	}
	return out
}
