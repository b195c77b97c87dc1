package interp

import (
	"go/parser"
	"go/token"
	"slices"
	"strconv"
)

// Preload readies this process's interpreter for the Go files at paths:
// it builds now, for the checker that every compile against
// opts.Symbols shares (Checker), the linked packages the files import,
// which the first compile importing each would otherwise build on its
// way (tens of milliseconds for the host package's table, most of a cold
// compile). A file that cannot be read or parsed is skipped, as is an
// import the binary does not link (the application's own packages are
// read from source at each compile). It returns how many packages it
// built or found built.
func Preload(paths []string, opts Options) int {
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, im := range f.Imports {
			if ip, err := strconv.Unquote(im.Path.Value); err == nil {
				seen[ip] = true
			}
		}
	}
	imports := make([]string, 0, len(seen))
	for ip := range seen {
		imports = append(imports, ip)
	}
	slices.Sort(imports)
	return Checker(opts.Symbols).Preload(imports...)
}
