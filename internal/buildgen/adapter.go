package buildgen

import (
	"fmt"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// writer writes the Go source of a registration file, collecting the
// imports that the types it names need.
type writer struct {
	self    *types.Package
	aliases map[string]string // import path -> alias
}

func newWriter(self *types.Package) *writer {
	return &writer{self: self, aliases: map[string]string{hostPath: "zg_host"}}
}

// qualify names p in the generated file.
func (w *writer) qualify(p *types.Package) string {
	if p == w.self {
		return ""
	}
	a, ok := w.aliases[p.Path()]
	if !ok {
		a = "zg_i" + strconv.Itoa(len(w.aliases))
		w.aliases[p.Path()] = a
	}
	return a
}

// imports returns the import lines, sorted.
func (w *writer) imports() []string {
	var out []string
	for path, a := range w.aliases {
		out = append(out, a+" "+strconv.Quote(path))
	}
	sort.Strings(out)
	return out
}

// injected maps the types the host injects to the expression that gives
// each, from zg_api (the request's *host.API) and zg_app.
var injected = map[string]string{
	"*" + hostPath + ".API":            "zg_api",
	"*" + hostPath + ".Request":        "zg_api.Req",
	"*" + hostPath + ".Response":       "zg_api.Res",
	"*" + hostPath + ".App":            "zg_app",
	"*" + hostPath + ".Server":         "zg_app.Server()",
	"*" + hostPath + ".RequestContext": "zg_api.G()",
	"context.Context":                  "zg_api.Context()",
	"*database/sql.DB":                 "zg_app.DB()",
}

// adapter returns a host.CompiledFunc that calls the func in variable
// name with its parameters injected by type: those the host injects from
// the request, provided values (App.Provide) looked up once when the file
// is loaded, the zero value for any other type.
func (w *writer) adapter(rel string, at token.Position, name string, sig *types.Signature) string {
	var b strings.Builder
	b.WriteString("zg_host.CompiledFunc(func(zg_app *zg_host.App) func(*zg_host.API) (any, error) {\n")
	fmt.Fprintf(&b, "\t\t\t\tif %s == nil {\n\t\t\t\t\treturn nil\n\t\t\t\t}\n", name)
	args := make([]string, sig.Params().Len())
	for i := range args {
		t := sig.Params().At(i).Type()
		if e, ok := injected[types.TypeString(t, nil)]; ok {
			args[i] = e
			continue
		}
		args[i] = "zg_p" + strconv.Itoa(i)
		fmt.Fprintf(&b, "\t\t\t\t%s := zg_host.CompiledParam[%s](zg_app, %q, %d, %d, %q, %d)\n",
			args[i], types.TypeString(t, w.qualify), rel, at.Line, at.Column, name, i+1)
	}
	call := name + "(" + strings.Join(args, ", ") + ")"
	b.WriteString("\t\t\t\treturn func(zg_api *zg_host.API) (any, error) {\n")
	switch sig.Results().Len() {
	case 0:
		fmt.Fprintf(&b, "\t\t\t\t\t%s\n\t\t\t\t\treturn nil, nil\n", call)
	case 1:
		fmt.Fprintf(&b, "\t\t\t\t\treturn %s, nil\n", call)
	default:
		fmt.Fprintf(&b, "\t\t\t\t\tzg_r, zg_err := %s\n\t\t\t\t\tif zg_err != nil {\n\t\t\t\t\t\treturn nil, zg_err\n\t\t\t\t\t}\n"+
			"\t\t\t\t\treturn zg_r, nil\n", call)
	}
	b.WriteString("\t\t\t\t}\n\t\t\t})")
	return b.String()
}
