package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The compile cost of naming a package's types, measured: a probe package
// that calls every exported func and method of the package (so that the
// compiler also inlines their bodies into it, and reads what those name)
// is compiled, and the functions its object file holds beyond its own are
// counted. They are what the compiler made again for the probe: generic
// instantiations, their equality funcs and wrappers. zealgo build pays
// them once per handler file.

// probeName is the probe's directory, under the module root: it exists
// only in the go command's overlay, never on disk.
const probeName = "zz_archcheck_probe"

// probeSource returns the probe's source: one func per exported func or
// method of pkg (parameters given as zero values), and the count of them.
// Generic funcs are instantiated with int when every type parameter
// allows any type; funcs and methods with a parameter of an unexported
// type are left out.
func probeSource(pkg *types.Package, name string) (string, int) {
	aliases := map[string]string{pkg.Path(): "p0"}
	qual := func(p *types.Package) string {
		if a, ok := aliases[p.Path()]; ok {
			return a
		}
		aliases[p.Path()] = "p" + strconv.Itoa(len(aliases))
		return aliases[p.Path()]
	}
	var funcs []string
	add := func(recv, call string, sig *types.Signature) {
		args, ok := zeroArgs(sig, qual)
		if ok {
			funcs = append(funcs, fmt.Sprintf("func f%d(%s) { %s(%s) }", len(funcs), recv, call, args))
		}
	}
	scope := pkg.Scope()
	for _, n := range scope.Names() {
		switch o := scope.Lookup(n).(type) {
		case *types.Func:
			if sig := o.Type().(*types.Signature); o.Exported() && sig.TypeParams().Len() == 0 {
				add("", "p0."+n, sig)
			} else if o.Exported() && anyParams(sig.TypeParams()) {
				ints := strings.Repeat("int, ", sig.TypeParams().Len())
				funcs = append(funcs, fmt.Sprintf("func f%d() { _ = p0.%s[%s] }", len(funcs), n, strings.TrimSuffix(ints, ", ")))
			}
		case *types.TypeName:
			named, ok := o.Type().(*types.Named)
			if !o.Exported() || !ok || o.IsAlias() || named.TypeParams().Len() > 0 || types.IsInterface(named) {
				continue
			}
			ms := types.NewMethodSet(types.NewPointer(named))
			for i := 0; i < ms.Len(); i++ {
				if m := ms.At(i).Obj(); m.Exported() {
					add("x *p0."+n, "x."+m.Name(), m.Type().(*types.Signature))
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport (\n", name)
	paths := make([]string, 0, len(aliases))
	for p := range aliases {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "\t%s %q\n", aliases[p], p)
	}
	b.WriteString(")\n\n" + strings.Join(funcs, "\n") + "\n")
	return b.String(), len(funcs)
}

// anyParams reports whether every type parameter allows any type.
func anyParams(tps *types.TypeParamList) bool {
	for i := 0; i < tps.Len(); i++ {
		if iface, ok := tps.At(i).Constraint().Underlying().(*types.Interface); !ok || !iface.Empty() {
			return false
		}
	}
	return true
}

// zeroArgs returns the arguments of a call of sig, each its parameter's
// zero value, and false when a parameter's type cannot be spelled outside
// its package.
func zeroArgs(sig *types.Signature, qual types.Qualifier) (string, bool) {
	args := make([]string, sig.Params().Len())
	for i := range args {
		t := sig.Params().At(i).Type()
		if !spellable(t) {
			return "", false
		}
		args[i] = "*new(" + types.TypeString(t, qual) + ")"
		if sig.Variadic() && i == len(args)-1 {
			args[i] += "..."
		}
	}
	return strings.Join(args, ", "), true
}

// spellable reports whether every named type in t is exported.
func spellable(t types.Type) bool {
	ok := true
	seen := map[types.Type]bool{}
	var walk func(types.Type)
	walk = func(t types.Type) {
		t = types.Unalias(t)
		if !ok || seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Named:
			if t.Obj().Pkg() != nil && !t.Obj().Exported() {
				ok = false
			}
			for i := 0; i < t.TypeArgs().Len(); i++ {
				walk(t.TypeArgs().At(i))
			}
		case *types.TypeParam:
			ok = false
		case *types.Basic, *types.Interface:
		default:
			for _, s := range typeSteps(t) {
				walk(s.t)
			}
		}
	}
	walk(t)
	return ok
}

// compileCost compiles the probe of pkg, the package at import path
// modPath+"/"+probeName (only in an overlay, under the module root
// modDir), and returns the functions its object file holds beyond the
// probe's own, counted by where they come from, most first.
func compileCost(pkg *types.Package, modPath, modDir string) (int, []string, error) {
	src, _ := probeSource(pkg, probeName)
	tmp, err := os.MkdirTemp("", "archcheck")
	if err != nil {
		return 0, nil, fmt.Errorf("archcheck: probe: %w", err)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "probe.go")
	overlay := filepath.Join(tmp, "overlay.json")
	ov, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(modDir, probeName, "probe.go"): file}})
	if err == nil {
		err = os.WriteFile(file, []byte(src), 0o644)
	}
	if err == nil {
		err = os.WriteFile(overlay, ov, 0o644)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("archcheck: probe: %w", err)
	}
	path := modPath + "/" + probeName
	obj, err := goTool(modDir, "list", "-overlay", overlay, "-export", "-f", "{{.Export}}", path)
	if err != nil {
		return 0, nil, err
	}
	syms, err := goTool(modDir, "tool", "nm", strings.TrimSpace(obj))
	if err != nil {
		return 0, nil, err
	}
	return countFuncs(syms, path+".")
}

// countFuncs counts the text symbols in go tool nm's output that do not
// start with own, grouped by where they come from.
func countFuncs(nm, own string) (int, []string, error) {
	n, by := 0, map[string]int{}
	for _, line := range strings.Split(nm, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[1] != "T" || strings.HasPrefix(f[2], own) {
			continue
		}
		n++
		by[symbolOrigin(strings.Join(f[2:], " "))]++
	}
	var top []string
	for k, v := range by {
		top = append(top, fmt.Sprintf("%5d %s", v, k))
	}
	sort.Slice(top, func(i, j int) bool { return top[i] > top[j] })
	return n, top, nil
}

// symbolOrigin shortens a symbol to the generic type or func it was made
// from: "sync/atomic.(*Pointer[...]).Load" is "sync/atomic.Pointer".
func symbolOrigin(sym string) string {
	sym = strings.TrimPrefix(sym, "type:.eq.")
	for strings.HasPrefix(sym, "[") { // an array's equality: its element's
		sym = sym[strings.IndexByte(sym, ']')+1:]
	}
	if i := strings.IndexByte(sym, '['); i >= 0 {
		sym = sym[:i]
	}
	sym = strings.Replace(sym, "(*", "", 1)
	if strings.HasPrefix(sym, "go.shape.") {
		return "go.shape (the methods of shape types)"
	}
	return sym
}

// goTool runs the go command in dir and returns its standard output.
func goTool(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("archcheck: probe: go %s: %w\n%s", args[0], err, stderr.String())
	}
	return string(out), nil
}
