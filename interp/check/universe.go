package check

import (
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/traefik/yaegi/stdlib"
	"github.com/traefik/yaegi/stdlib/generic"
)

// universe holds the packages a binary links, as go/types sees them: each
// package of the symbol tables is built from the reflect values of its
// exported names, and the generic parts of the standard library (cmp,
// maps, slices) from the source Yaegi compiles for them. It implements
// types.Importer; packages are built on first import and kept.
type universe struct {
	mu      sync.Mutex
	tables  map[string]map[string]reflect.Value // import path -> exported names
	names   map[string]string                   // import path -> package name
	sources map[string]string                   // import path -> Go source (generic packages)
	pkgs    map[string]*types.Package           // every package seen, built or not
	built   map[string]bool
	named   map[reflect.Type]*types.Named
}

// errNotLinked is the import error of a path no table holds.
var errNotLinked = errors.New("not linked")

func newUniverse(tables []Exports) *universe {
	u := &universe{tables: map[string]map[string]reflect.Value{}, names: map[string]string{},
		sources: map[string]string{}, pkgs: map[string]*types.Package{}, built: map[string]bool{},
		named: map[reflect.Type]*types.Named{}}
	for _, t := range append([]Exports{stdlib.Symbols}, tables...) {
		for key, syms := range t {
			p := path.Dir(key)
			if p == "." {
				continue
			}
			u.names[p] = path.Base(key)
			m := u.tables[p]
			if m == nil {
				m = map[string]reflect.Value{}
				u.tables[p] = m
			}
			for n, v := range syms {
				m[n] = v
			}
		}
	}
	for _, src := range generic.Sources {
		if name, ok := packageName(src); ok {
			u.sources[name] = src
		}
	}
	return u
}

// packageName returns the name in the package clause of src.
func packageName(src string) (string, bool) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.PackageClauseOnly)
	if err != nil {
		return "", false
	}
	return f.Name.Name, true
}

// links reports whether the binary links the package at path.
func (u *universe) links(p string) bool {
	_, src := u.sources[p]
	_, tab := u.tables[p]
	return src || tab
}

// Import returns the package at path, building it on first use.
func (u *universe) Import(p string) (*types.Package, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.importLocked(p)
}

// lockedImporter imports while the universe's lock is held (for the
// generic sources, which import each other).
type lockedImporter struct{ u *universe }

func (l lockedImporter) Import(p string) (*types.Package, error) { return l.u.importLocked(p) }

func (u *universe) importLocked(p string) (*types.Package, error) {
	if u.built[p] {
		return u.pkgs[p], nil
	}
	if src, ok := u.sources[p]; ok {
		return u.buildSource(p, src)
	}
	syms, ok := u.tables[p]
	if !ok {
		return nil, errNotLinked
	}
	pkg := u.pkg(p)
	names := make([]string, 0, len(syms))
	for n := range syms {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.HasPrefix(n, "_") || !token.IsExported(n) {
			continue // interface wrappers of yaegi extract
		}
		if obj := u.object(pkg, n, syms[n]); obj != nil {
			pkg.Scope().Insert(obj)
		}
	}
	pkg.MarkComplete()
	u.built[p] = true
	return pkg, nil
}

// buildSource type-checks the source of a generic package.
func (u *universe) buildSource(p, src string) (*types.Package, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p+".go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("zealgo: generic source of %s: %w", p, err)
	}
	conf := types.Config{Importer: lockedImporter{u}, Error: func(error) {}}
	pkg, _ := conf.Check(p, fset, []*ast.File{f}, nil)
	u.pkgs[p], u.built[p] = pkg, true
	return pkg, nil
}

// pkg returns the package at path, created empty on first use.
func (u *universe) pkg(p string) *types.Package {
	if pkg, ok := u.pkgs[p]; ok {
		return pkg
	}
	name := u.names[p]
	if name == "" {
		name = path.Base(p)
	}
	pkg := types.NewPackage(p, name)
	u.pkgs[p] = pkg
	return pkg
}

// object turns one exported value of a symbol table into its object:
// yaegi extract stores a func as its value, a variable as an addressable
// value, a type as a nil pointer to it, an untyped constant as a
// constant.Value and a typed constant as its value.
func (u *universe) object(pkg *types.Package, name string, v reflect.Value) types.Object {
	if !v.IsValid() {
		return nil
	}
	if cv, ok := asConstant(v); ok {
		return types.NewConst(token.NoPos, pkg, name, types.Typ[untypedKind(cv.Kind())], cv)
	}
	t := v.Type()
	switch {
	case v.CanAddr():
		return types.NewVar(token.NoPos, pkg, name, u.typ(t))
	case t.Kind() == reflect.Func:
		return types.NewFunc(token.NoPos, pkg, name, u.signature(t, nil))
	case t.Kind() == reflect.Pointer && v.IsNil():
		elem := t.Elem()
		typ := u.typ(elem)
		if n, ok := typ.(*types.Named); ok && n.Obj().Pkg() == pkg && n.Obj().Name() == name {
			return n.Obj()
		}
		return types.NewTypeName(token.NoPos, pkg, name, typ) // an alias
	}
	if cv, ok := typedConstant(v); ok {
		return types.NewConst(token.NoPos, pkg, name, u.typ(t), cv)
	}
	return types.NewVar(token.NoPos, pkg, name, u.typ(t))
}

func asConstant(v reflect.Value) (constant.Value, bool) {
	if !v.CanInterface() {
		return nil, false
	}
	cv, ok := v.Interface().(constant.Value)
	return cv, ok
}

func untypedKind(k constant.Kind) types.BasicKind {
	switch k {
	case constant.Bool:
		return types.UntypedBool
	case constant.String:
		return types.UntypedString
	case constant.Float:
		return types.UntypedFloat
	case constant.Complex:
		return types.UntypedComplex
	}
	return types.UntypedInt
}

// typedConstant returns the value of a typed constant of a basic kind.
func typedConstant(v reflect.Value) (constant.Value, bool) {
	switch v.Kind() {
	case reflect.Bool:
		return constant.MakeBool(v.Bool()), true
	case reflect.String:
		return constant.MakeString(v.String()), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return constant.MakeInt64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return constant.MakeUint64(v.Uint()), true
	case reflect.Float32, reflect.Float64:
		return constant.MakeFloat64(v.Float()), true
	}
	return nil, false
}

var errorType = reflect.TypeOf((*error)(nil)).Elem()

// typ converts a reflect type into its go/types type.
func (u *universe) typ(t reflect.Type) types.Type {
	switch {
	case t == errorType:
		return types.Universe.Lookup("error").Type()
	case t.Kind() == reflect.UnsafePointer:
		return types.Typ[types.UnsafePointer]
	case t.Name() != "" && t.PkgPath() != "":
		return u.namedType(t)
	}
	return u.structure(t)
}

var basicKinds = map[reflect.Kind]types.BasicKind{
	reflect.Bool: types.Bool, reflect.Int: types.Int, reflect.Int8: types.Int8, reflect.Int16: types.Int16,
	reflect.Int32: types.Int32, reflect.Int64: types.Int64, reflect.Uint: types.Uint, reflect.Uint8: types.Uint8,
	reflect.Uint16: types.Uint16, reflect.Uint32: types.Uint32, reflect.Uint64: types.Uint64,
	reflect.Uintptr: types.Uintptr, reflect.Float32: types.Float32, reflect.Float64: types.Float64,
	reflect.Complex64: types.Complex64, reflect.Complex128: types.Complex128, reflect.String: types.String,
	reflect.UnsafePointer: types.UnsafePointer,
}

// structure converts t as if it had no name.
func (u *universe) structure(t reflect.Type) types.Type {
	if k, ok := basicKinds[t.Kind()]; ok {
		return types.Typ[k]
	}
	switch t.Kind() {
	case reflect.Pointer:
		return types.NewPointer(u.typ(t.Elem()))
	case reflect.Slice:
		return types.NewSlice(u.typ(t.Elem()))
	case reflect.Array:
		return types.NewArray(u.typ(t.Elem()), int64(t.Len()))
	case reflect.Map:
		return types.NewMap(u.typ(t.Key()), u.typ(t.Elem()))
	case reflect.Chan:
		dir := types.SendRecv
		switch t.ChanDir() {
		case reflect.SendDir:
			dir = types.SendOnly
		case reflect.RecvDir:
			dir = types.RecvOnly
		}
		return types.NewChan(dir, u.typ(t.Elem()))
	case reflect.Func:
		return u.signature(t, nil)
	case reflect.Interface:
		return u.iface(t)
	case reflect.Struct:
		return u.strct(t)
	}
	return types.Typ[types.Invalid]
}

func (u *universe) iface(t reflect.Type) *types.Interface {
	var methods []*types.Func
	for i := 0; i < t.NumMethod(); i++ {
		m := t.Method(i)
		methods = append(methods, types.NewFunc(token.NoPos, u.memberPkg(m.PkgPath), m.Name, u.signature(m.Type, nil)))
	}
	return types.NewInterfaceType(methods, nil).Complete()
}

func (u *universe) strct(t reflect.Type) *types.Struct {
	fields := make([]*types.Var, t.NumField())
	tags := make([]string, t.NumField())
	for i := range fields {
		f := t.Field(i)
		fields[i] = types.NewField(token.NoPos, u.memberPkg(f.PkgPath), f.Name, u.typ(f.Type), f.Anonymous)
		tags[i] = string(f.Tag)
	}
	return types.NewStruct(fields, tags)
}

// memberPkg is the package of a field or method: nil when exported.
func (u *universe) memberPkg(p string) *types.Package {
	if p == "" {
		return nil
	}
	return u.pkg(p)
}

// signature converts a func type; recv, when set, is the receiver, and
// t's first parameter is the receiver's (a method value of reflect).
func (u *universe) signature(t reflect.Type, recv *types.Var) *types.Signature {
	first := 0
	if recv != nil {
		first = 1
	}
	var params, results []*types.Var
	for i := first; i < t.NumIn(); i++ {
		params = append(params, types.NewParam(token.NoPos, nil, "", u.typ(t.In(i))))
	}
	for i := 0; i < t.NumOut(); i++ {
		results = append(results, types.NewParam(token.NoPos, nil, "", u.typ(t.Out(i))))
	}
	return types.NewSignatureType(recv, nil, nil, types.NewTuple(params...), types.NewTuple(results...), t.IsVariadic())
}

// namedType converts a defined type with its methods. The type is cached
// before its structure is converted, so that recursive types end.
func (u *universe) namedType(t reflect.Type) *types.Named {
	if n, ok := u.named[t]; ok {
		return n
	}
	pkg := u.pkg(t.PkgPath())
	obj := types.NewTypeName(token.NoPos, pkg, t.Name(), nil)
	n := types.NewNamed(obj, nil, nil)
	u.named[t] = n
	if t.Kind() == reflect.Interface {
		n.SetUnderlying(u.iface(t))
		return n
	}
	n.SetUnderlying(u.structure(t))
	seen := map[string]bool{}
	for _, recvT := range []reflect.Type{t, reflect.PointerTo(t)} {
		var recv types.Type = n
		if recvT != t {
			recv = types.NewPointer(n)
		}
		for i := 0; i < recvT.NumMethod(); i++ {
			m := recvT.Method(i)
			if seen[m.Name] {
				continue
			}
			seen[m.Name] = true
			r := types.NewVar(token.NoPos, pkg, "", recv)
			n.AddMethod(types.NewFunc(token.NoPos, pkg, m.Name, u.signature(m.Type, r)))
		}
	}
	return n
}
