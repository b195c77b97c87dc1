package host

import (
	"path/filepath"
	"strings"

	"github.com/zealgo/zealgo/internal/buildgen"
)

// Route is one endpoint or page, as Routes lists it.
type Route struct {
	URL     string // e.g. /api/device/list
	Methods string // the Allow list
	File    string // relative to the root
	Note    string // mode, or the problem that keeps the file from loading
}

// listRoutes is App.Routes.
func listRoutes(a *App) ([]Route, error) {
	if err := a.prepare(); err != nil {
		return nil, err
	}
	var out []Route
	rt := rtOf(a)
	l := newLoader(a, &rt.ops, &rt.db, nil)
	for _, d := range []struct{ dir, prefix string }{{a.dirs.api, "/api/"}, {a.dirs.public, "/"}} {
		files, err := goFiles(d.dir)
		if err != nil {
			return nil, err
		}
		for _, path := range files {
			rel, _ := filepath.Rel(d.dir, path)
			url := d.prefix + routeURL(strings.TrimSuffix(filepath.ToSlash(rel), ".go")) // {slug}, {path...}
			if d.prefix == "/" {
				url = pageURL(url)
			}
			r := Route{URL: url, File: a.dirs.rel(path)}
			prog, _, err := l.compile(d.dir, path)
			var f *handlerFile
			if err == nil {
				f, err = l.analyze(prog, r.File)
			}
			if err != nil {
				r.Methods, r.Note = "-", firstLine(err.Error())
			} else {
				r.Methods = f.allow
				r.Note = "mode 2 (per method)"
				if f.all != nil {
					r.Note = "mode 1 (" + f.all.name + ")"
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// pageURL turns "/admin/index" into "/admin/" and "/index" into "/".
func pageURL(u string) string {
	if u == "/index" {
		return "/"
	}
	if s, ok := strings.CutSuffix(u, "/index"); ok {
		return s + "/"
	}
	return u
}

// goFiles lists the .go files below dir, sorted, as zealgo build
// compiles them; none if dir is missing.
var goFiles = buildgen.GoFiles

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
