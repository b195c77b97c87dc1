// Package routepat reads route parameters in the names of handler and page
// files and directories: a directory or file stem "[name]" matches any one
// URL segment, a file stem "[...name]" one or more remaining segments,
// name being a Go identifier. The host resolves requests with it and
// `zealgo build` names the mode-1 variable of such a file with it.
package routepat

import "go/token"

// Parse reports whether elem, a directory name or a file name without its
// ".go", names a route parameter, and returns the parameter's name and
// whether it takes the rest of the path ("[...name]").
func Parse(elem string) (name string, rest, ok bool) {
	if len(elem) < 3 || elem[0] != '[' || elem[len(elem)-1] != ']' {
		return "", false, false
	}
	name = elem[1 : len(elem)-1]
	if len(name) > 3 && name[:3] == "..." {
		name, rest = name[3:], true
	}
	if !token.IsIdentifier(name) {
		return "", false, false
	}
	return name, rest, true
}

// VarName returns the variable that serves every method (mode 1) in the
// file whose name without ".go" is stem: the parameter's name for
// "[slug]" and "[...path]", else stem itself.
func VarName(stem string) string {
	if name, _, ok := Parse(stem); ok {
		return name
	}
	return stem
}

// Pattern returns how `zealgo routes` prints the URL segment elem:
// "{slug}" for "[slug]", "{path...}" for "[...path]", elem itself
// otherwise.
func Pattern(elem string) string {
	name, rest, ok := Parse(elem)
	switch {
	case !ok:
		return elem
	case rest:
		return "{" + name + "...}"
	}
	return "{" + name + "}"
}
