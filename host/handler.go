package host

import (
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/zealgo/zealgo/internal/routepat"
	"github.com/zealgo/zealgo/interp"
)

// methodVars are the variable names of mode 2, in the order Allow lists them.
var methodVars = []string{"get", "post", "put", "delete", "patch"}

// handlerFile is a compiled handler or page file with its funcs sorted by
// role.
type handlerFile struct {
	rel   string                  // path relative to the root, e.g. api/device/list.go
	all   *handlerFunc            // mode 1: the func named after the file
	by    map[string]*handlerFunc // mode 2: by HTTP method
	allow string                  // the Allow header
	// allowed lists the methods of the Allow header, for the 405 body.
	allowed []string
	// serve runs the file's own middleware around the handler call; nil
	// when the file has none.
	mw    []func(http.Handler) http.Handler
	serve http.Handler
	prog  fileVars
	// input: the file's input is parsed before the call (needsInput).
	input bool
	// detach: the file may start goroutines (a go statement, or an
	// interpreted package), which may use the call's objects after it:
	// its requests' states are not reused (state.go).
	detach bool

	series seriesSlot // its request metrics (ops_series.go)
}

// pick returns the func serving method, or the error to send.
func (f *handlerFile) pick(method string) (*handlerFunc, *Error) {
	if f.all != nil {
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch:
			return f.all, nil
		}
	} else {
		m := method
		if m == http.MethodHead {
			m = http.MethodGet
		}
		if fn := f.by[m]; fn != nil {
			return fn, nil
		}
	}
	e := errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed,
		"%s does not serve %s; it serves %s", f.rel, method, f.allow)
	e.Header = http.Header{"Allow": {f.allow}}
	e.Fields = map[string]any{"allowed": f.allowed}
	return nil, e
}

// argKind says what a handler parameter receives.
type argKind int

const (
	argZero argKind = iota
	argAPI
	argRequest
	argResponse
	argApp
	argServer
	argContext
	argGoContext
	argDB // the application's *sql.DB (db.go)
	argProvided
	argTaskInfo // a task's *TaskInfo (task_worker.go); tasks only
)

var (
	typeAPI       = reflect.TypeOf((*API)(nil))
	typeRequest   = reflect.TypeOf((*Request)(nil))
	typeResponse  = reflect.TypeOf((*Response)(nil))
	typeApp       = reflect.TypeOf((*App)(nil))
	typeServer    = reflect.TypeOf((*Server)(nil))
	typeReqCtx    = reflect.TypeOf((*RequestContext)(nil))
	typeGoContext = reflect.TypeOf((*context.Context)(nil)).Elem()
	typeError     = reflect.TypeOf((*error)(nil)).Elem()
)

func kindOf(t reflect.Type) argKind {
	switch t {
	case typeAPI:
		return argAPI
	case typeRequest:
		return argRequest
	case typeResponse:
		return argResponse
	case typeApp:
		return argApp
	case typeServer:
		return argServer
	case typeReqCtx:
		return argContext
	case typeGoContext:
		return argGoContext
	case typeSQLDB:
		return argDB
	}
	return argZero
}

// handlerFunc is one func of a file with what its call needs.
type handlerFunc struct {
	name string
	call func(api *API) (any, error)
}

// newHandlerFunc checks the signature of v, the value of variable name, and
// prepares its call: parameters injected by type, results (), (T) or (T, error).
func (l *loader) newHandlerFunc(prog fileVars, name string, v reflect.Value) (*handlerFunc, error) {
	bad := func(format string, args ...any) error {
		p := prog.Position(name)
		return &interp.Error{File: prog.rel(), Line: p.Line, Col: p.Column, Msg: fmt.Sprintf(format, args...)}
	}
	if v.Kind() != reflect.Func {
		return nil, bad("%s must be a func, not %s", name, v.Type())
	}
	if v.IsNil() {
		return nil, bad("%s is a nil func", name)
	}
	t := v.Type()
	if t.IsVariadic() {
		return nil, bad("%s: parameter %d (...%s) is variadic and cannot be injected", name, t.NumIn(), t.In(t.NumIn()-1).Elem())
	}
	switch {
	case t.NumOut() > 2:
		return nil, bad("%s returns %d results; a handler returns (), (T) or (T, error)", name, t.NumOut())
	case t.NumOut() == 2 && t.Out(1) != typeError:
		return nil, bad("%s: the second result must be error, not %s", name, t.Out(1))
	}
	h := &handlerFunc{name: name}
	// Common shapes are called directly, without reflection.
	switch f := v.Interface().(type) {
	case func(*API) any:
		h.call = func(api *API) (any, error) { return f(api), nil }
		return h, nil
	case func(*API) (any, error):
		h.call = f
		return h, nil
	case func(*API):
		h.call = func(api *API) (any, error) { f(api); return nil, nil }
		return h, nil
	case func(*API) map[string]any:
		h.call = func(api *API) (any, error) { return f(api), nil }
		return h, nil
	case func(*API) string:
		h.call = func(api *API) (any, error) { return f(api), nil }
		return h, nil
	case func(*API) int:
		h.call = func(api *API) (any, error) { return f(api), nil }
		return h, nil
	case func() any:
		h.call = func(*API) (any, error) { return f(), nil }
		return h, nil
	}
	kinds := make([]argKind, t.NumIn())
	zeros := make([]reflect.Value, t.NumIn())
	for i := range kinds {
		kinds[i] = kindOf(t.In(i))
		zeros[i] = reflect.Zero(t.In(i))
		if p, ok := regOf(l.app).provided[t.In(i)]; ok && kinds[i] == argZero {
			kinds[i], zeros[i] = argProvided, p
		}
		if kinds[i] == argZero {
			pos := prog.Position(name)
			l.log.Warn(fmt.Sprintf("%s:%d:%d: %s: parameter %d (%s) is not injectable and receives its zero value",
				prog.rel(), pos.Line, pos.Column, name, i+1, t.In(i)), "file", prog.rel())
		}
	}
	nout := t.NumOut()
	h.call = func(api *API) (any, error) {
		args := make([]reflect.Value, len(kinds))
		for i, k := range kinds {
			args[i] = inject(api, k, zeros[i])
		}
		out := v.Call(args)
		switch nout {
		case 0:
			return nil, nil
		case 1:
			return out[0].Interface(), nil
		}
		err, _ := out[1].Interface().(error)
		if err != nil {
			return nil, err
		}
		return out[0].Interface(), nil
	}
	return h, nil
}

// analyze sorts the funcs of a compiled handler file: mode 1 when it holds a
// func named after the file (always for a file named after a verb), else
// mode 2 with a func per method.
func (l *loader) analyze(prog *interp.Program, rel string) (*handlerFile, error) {
	return l.analyzeFile(interpVars{prog}, rel)
}

// analyzeFile is analyze for a file from either source (source.go).
func (l *loader) analyzeFile(prog fileVars, rel string) (*handlerFile, error) {
	// [slug].go and [...path].go: var slug, var path (routepat.VarName).
	base := routepat.VarName(strings.TrimSuffix(rel[strings.LastIndexByte(rel, '/')+1:], ".go"))
	f := &handlerFile{rel: rel, prog: prog, input: prog.needsInput(l), detach: prog.mayDetach(l)}
	var methods []string
	if v, ok := prog.Var(base); ok {
		fn, err := l.newHandlerFunc(prog, base, v)
		if err != nil {
			return nil, err
		}
		f.all = fn
		f.allowed = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"}
		for _, m := range methodVars {
			if _, ok := prog.Var(m); ok && m != base {
				methods = append(methods, m)
			}
		}
		if len(methods) > 0 {
			l.log.Warn(fmt.Sprintf("%s: %s serves every method, so %s are unreachable",
				rel, base, strings.Join(methods, ", ")), "file", rel)
		}
	} else if isVerb(base) {
		// A file named after a verb is always mode 1 (spec routing rule 7):
		// its other method funcs never serve.
		return nil, errorf(http.StatusNotFound, CodeHandlerNotFound,
			"%s is named after a method, so it must declare var %s = func(api *host.API) any { ... }, which serves every method",
			rel, base)
	} else {
		f.by = map[string]*handlerFunc{}
		for _, m := range methodVars {
			v, ok := prog.Var(m)
			if !ok {
				continue
			}
			fn, err := l.newHandlerFunc(prog, m, v)
			if err != nil {
				return nil, err
			}
			M := strings.ToUpper(m)
			f.by[M] = fn
			f.allowed = append(f.allowed, M)
			if m == "get" {
				f.allowed = append(f.allowed, "HEAD")
			}
		}
		if len(f.by) == 0 && !token.IsIdentifier(base) {
			return nil, errorf(http.StatusNotFound, CodeHandlerNotFound,
				"%s defines no handler: %s is no Go identifier, so no var can be named after the file to serve every method; "+
					"declare vars get, post, put, delete, patch, or rename the file to %s.go", rel, base, identifier(base))
		}
		if len(f.by) == 0 {
			return nil, errorf(http.StatusNotFound, CodeHandlerNotFound,
				"%s defines no handler: declare var %s = func(api *host.API) any { ... } for every method, or vars get, post, put, delete, patch",
				rel, base)
		}
		f.allowed = append(f.allowed, "OPTIONS")
	}
	f.allow = strings.Join(f.allowed, ", ")
	if v, ok := prog.Var("middleware"); ok {
		names, ok := v.Interface().([]string)
		if !ok {
			p := prog.Position("middleware")
			return nil, &interp.Error{File: rel, Line: p.Line, Col: p.Column, Msg: "middleware must be a []string of alias names"}
		}
		for _, n := range names {
			mw, err := regOf(l.app).aliases.middleware(n)
			if err != nil {
				name, _, _ := strings.Cut(n, ":")
				if _, known := regOf(l.app).aliases[name]; known {
					return nil, errorf(http.StatusInternalServerError, CodeUnknownMiddleware,
						"%s: its middleware list names %q: %v", rel, n, err)
				}
				return nil, errorf(http.StatusInternalServerError, CodeUnknownMiddleware,
					"%s: its middleware list names %q, which is not a registered alias", rel, n)
			}
			f.mw = append(f.mw, mw)
		}
	}
	return f, nil
}

// identifier turns a file name into a Go identifier: "my-file" into
// "my_file".
func identifier(name string) string {
	b := []rune(name)
	for i, r := range b {
		if !unicode.IsLetter(r) && r != '_' && (i == 0 || !unicode.IsDigit(r)) {
			b[i] = '_'
		}
	}
	return string(b)
}

// isVerb reports whether name is one of the method variables of mode 2.
func isVerb(name string) bool {
	for _, m := range methodVars {
		if m == name {
			return true
		}
	}
	return false
}

// inputFields are the fields that hold a request's input: API.Input,
// Request.Post and RequestContext.Post, and the Form, PostForm and
// MultipartForm of *http.Request. Compiled code cannot fill a field when
// it is first read, so a file that names one gets its input before the
// call.
var inputFields = map[string]bool{"Input": true, "Post": true, "Form": true, "PostForm": true, "MultipartForm": true}

// needsInput reports whether the input of a file's requests must be
// parsed before its func is called: the file names one of inputFields
// (anywhere: a false alarm only costs the parse every request used to
// cost), or imports a package that is interpreted from source, which may
// read them on the file's behalf. Other files read the body on first use
// through a method, or never.
func (l *loader) needsInput(f *ast.File) bool {
	return f == nil || l.importsSource(importPaths(f)) || holds(f, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		return ok && inputFields[id.Name]
	})
}

// importsSource reports whether one of paths is a package interpreted
// from source (neither the standard library nor a registered symbol
// table).
func (l *loader) importsSource(paths []string) bool {
	for _, p := range paths {
		if !l.compiledImport(p) {
			return true
		}
	}
	return false
}

// importPaths returns the import paths of f.
func importPaths(f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		if path, err := strconv.Unquote(imp.Path.Value); err == nil {
			out = append(out, path)
		}
	}
	return out
}

// holds reports whether a node of f matches.
func holds(f *ast.File, match func(ast.Node) bool) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		found = found || n != nil && match(n)
		return !found
	})
	return found
}

// compiledImport reports whether path is a standard library package or
// one whose symbol table the application registered (keys "path/name").
func (l *loader) compiledImport(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	if !strings.Contains(first, ".") {
		return true
	}
	for _, s := range l.app.symbols {
		for key := range s {
			if rest, ok := strings.CutPrefix(key, path+"/"); ok && !strings.Contains(rest, "/") {
				return true
			}
		}
	}
	return false
}

// mayDetach reports whether a file may start goroutines: it holds a go
// statement, or imports a package that is interpreted from source.
func (l *loader) mayDetach(f *ast.File) bool {
	return f == nil || l.importsSource(importPaths(f)) || holds(f, func(n ast.Node) bool {
		_, ok := n.(*ast.GoStmt)
		return ok
	})
}
