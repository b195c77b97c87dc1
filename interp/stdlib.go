package interp

import (
	"go/ast"
	"path"
	"strconv"
	"sync"

	"github.com/traefik/yaegi/stdlib"
)

// yaegiSetUp lists the packages Yaegi sets up itself when the standard
// library is loaded: it rewrites symbols of fmt, log, flag, os and math/bits
// for each interpreter (stdio, log.Fatal panicking, a private environment)
// and compiles generic source for cmp, maps and slices.
var yaegiSetUp = map[string]bool{
	"fmt": true, "log": true, "flag": true, "os": true, "math/bits": true,
	"cmp": true, "maps": true, "slices": true,
}

// stdlibKeys maps an import path of the standard library to its key in
// stdlib.Symbols ("math/rand/v2" -> "math/rand/v2/rand").
var stdlibKeys = sync.OnceValue(func() map[string]string {
	m := make(map[string]string, len(stdlib.Symbols))
	for k := range stdlib.Symbols {
		m[path.Dir(k)] = k
	}
	return m
})

// stdlibFor returns the part of the standard library's symbols that the
// import paths name. Giving an interpreter the whole table costs about
// 1.3 MiB and 3 ms per file (Yaegi copies every symbol and compiles its
// generic source); a file that imports one of yaegiSetUp still gets all of
// it, so that Yaegi's own set-up runs as it always does.
func stdlibFor(imports []string) Exports {
	keys := stdlibKeys()
	sub := Exports{}
	for _, p := range imports {
		if yaegiSetUp[p] {
			return stdlib.Symbols
		}
		if k, ok := keys[p]; ok {
			sub[k] = stdlib.Symbols[k]
		}
	}
	return sub
}

// importPaths returns the import paths of f.
func importPaths(f *ast.File) []string {
	out := make([]string, 0, len(f.Imports))
	for _, im := range f.Imports {
		if p, err := strconv.Unquote(im.Path.Value); err == nil {
			out = append(out, p)
		}
	}
	return out
}
