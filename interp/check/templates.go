package check

import (
	"errors"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template/parse"
)

// Templates parses every template/**/*.html below root, as the host's
// template set does (html/template; each file named by its path below
// template/ without .html), and returns each problem as a Diagnostic
// "template/x.html:line: message", with the number of files it read:
// a file that does not parse, and a {{template "name"}} that names no file
// and no {{define}}.
func Templates(root string) ([]Diagnostic, int, error) {
	dir := filepath.Join(root, "template")
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && p == dir && errors.Is(err, fs.ErrNotExist):
			return fs.SkipDir
		case err != nil:
			return err
		case d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != dir:
			return fs.SkipDir
		case !d.IsDir() && strings.HasSuffix(p, ".html"):
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	sort.Strings(paths)
	var out []Diagnostic
	defined := map[string]bool{}
	parsed := map[string]*template.Template{}
	for _, p := range paths {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		name := strings.TrimSuffix(strings.TrimPrefix(rel, "template/"), ".html")
		defined[name] = true
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, 0, err
		}
		t, err := template.New(name).Parse(string(src))
		if err != nil {
			out = append(out, templateError(rel, err))
			continue
		}
		parsed[rel] = t
		for _, d := range t.Templates() {
			defined[d.Name()] = true
		}
	}
	for _, p := range paths {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if t := parsed[rel]; t != nil {
			out = append(out, undefinedTemplates(rel, t, defined)...)
		}
	}
	return out, len(paths), nil
}

var templateErrPos = regexp.MustCompile(`^template: [^:]*:(\d+):(?:\d+:)? ?(.*)$`)

// templateError turns "template: name:12: message" into a Diagnostic.
func templateError(rel string, err error) Diagnostic {
	d := Diagnostic{File: rel, Rule: "template", Msg: err.Error()}
	if m := templateErrPos.FindStringSubmatch(err.Error()); m != nil {
		d.Line, _ = strconv.Atoi(m[1])
		d.Msg = m[2]
	}
	return d
}

// undefinedTemplates reports each {{template "name"}} of t whose name no
// file and no {{define}} of the set gives.
func undefinedTemplates(rel string, t *template.Template, defined map[string]bool) []Diagnostic {
	var out []Diagnostic
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch x := n.(type) {
		case *parse.ListNode:
			if x == nil {
				return
			}
			for _, c := range x.Nodes {
				walk(c)
			}
		case *parse.IfNode:
			walk(x.List)
			walk(x.ElseList)
		case *parse.RangeNode:
			walk(x.List)
			walk(x.ElseList)
		case *parse.WithNode:
			walk(x.List)
			walk(x.ElseList)
		case *parse.TemplateNode:
			if !defined[x.Name] {
				out = append(out, Diagnostic{File: rel, Line: x.Line, Rule: "template",
					Msg: "{{template " + strconv.Quote(x.Name) + "}} names no template: there is no template/" + x.Name + ".html and no {{define " + strconv.Quote(x.Name) + "}}"})
			}
		}
	}
	for _, d := range t.Templates() {
		if d.Tree != nil {
			walk(d.Tree.Root)
		}
	}
	return out
}
