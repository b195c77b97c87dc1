package host

import (
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/zealgo/zealgo/interp"
)

// A panic's frames in a compiled binary (zealgo build), named as the
// interpreter names them: a frame of a handler, page or task file gets
// the file's path and the function's name in it ("api/x.go:9 lookup"),
// the func of variable boom is "boom" (a func literal inside it
// "boom.func1"), and the frames end at the file's outermost func, leaving
// out the generated adapter and the host. Frames of compiled code that
// the file called, where the panic began, come first, as interpreted.

// compiledFuncs maps a compiled file's package to the file and the
// runtime names of its variables' funcs to the variables' names.
var compiledFuncs struct {
	sync.Mutex
	files map[string]*compiledNames
}

type compiledNames struct {
	file  *CompiledFile
	names map[string]string // "init.func1" -> "boom"
}

// registerFrames records the names of f's funcs; RegisterCompiled calls
// it, at init time.
func registerFrames(f *CompiledFile) {
	if f.Package == "" {
		return
	}
	cn := &compiledNames{file: f, names: map[string]string{}}
	for name, v := range f.Funcs {
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Func || rv.IsNil() {
			continue
		}
		fn := runtime.FuncForPC(rv.Pointer())
		if fn == nil {
			continue
		}
		if short, ok := strings.CutPrefix(fn.Name(), f.Package+"."); ok && strings.Contains(short, "func") {
			cn.names[short] = name // a func literal's runtime name
		}
	}
	compiledFuncs.Lock()
	defer compiledFuncs.Unlock()
	if compiledFuncs.files == nil {
		compiledFuncs.files = map[string]*compiledNames{}
	}
	compiledFuncs.files[f.Package] = cn
}

// compiledFrame returns the file and the name of fn, the runtime name
// of a function, when fn belongs to a compiled file.
func compiledFrame(fn string) (*CompiledFile, string) {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return nil, ""
	}
	pkg, rest := fn[:slash+1+dot], fn[slash+2+dot:]
	compiledFuncs.Lock()
	cn := compiledFuncs.files[pkg]
	compiledFuncs.Unlock()
	if cn == nil {
		return nil, ""
	}
	for short, name := range cn.names {
		if rest == short {
			return cn.file, name
		}
		if after, ok := strings.CutPrefix(rest, short+"."); ok {
			return cn.file, name + "." + after
		}
	}
	return cn.file, rest
}

// compiledPanicFrames returns the frames of the panic being recovered, as
// the interpreter gives them, or nil when the panic crossed no compiled
// file.
func compiledPanicFrames() []interp.Frame {
	var pcs [64]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	var out []interp.Frame
	inFile := false
	for {
		fr, more := frames.Next()
		f, name := compiledFrame(fr.Function)
		switch {
		case fr.Function == "runtime.gopanic":
			out, inFile = out[:0], false
		case f != nil && filepath.Base(fr.File) == "zz_register.go": // the generated adapter
			if inFile {
				return out
			}
		case f != nil:
			out = append(out, interp.Frame{File: f.Path, Line: fr.Line, Func: name})
			inFile = true
		case !inFile && fr.Function != "" && !strings.HasPrefix(fr.Function, "runtime."):
			// compiled code the file called, where the panic began (once
			// in the file, compiled frames are left out, as interpreted)
			out = append(out, interp.CompiledFrame(fr))
		}
		if !more {
			break
		}
	}
	if !inFile {
		return nil
	}
	return out
}
