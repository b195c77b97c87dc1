// Package scaffold writes a new zealgo application, for `zealgo new`: a
// go.mod (made here) requiring the running zealgo, a mode 1 and a mode 2 handler, a
// page with its template and stylesheet, a shared package under lib/, a
// task, a migration, a golden test, a Dockerfile and a README.
//
// The Dockerfile (files/Dockerfile.tmpl) is also the repository's own: its
// Dockerfile and .dockerignore are rendered from the same files for the
// sample application (Dockerfile, DockerIgnore; a test keeps them equal).
//
// The application's files are the tree files/, embedded: a name ending in
// ".tmpl" is a text/template executed with Data and written without the
// suffix (every .go file is one, so that this module's go build and go vet
// never see them); any other file is copied as is.
package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

//go:embed all:files
var files embed.FS

// Data is what the templates of files/ are executed with.
type Data struct {
	// Module is the application's module path ("example.com/blog").
	Module string
	// Name is the last element of the module path, without a major
	// version suffix, lowercased ("blog").
	Name string
	// GoVersion is the go line of go.mod.
	GoVersion string
	// Zealgo is the framework the application requires.
	Zealgo Framework
	// Main is the package the Dockerfile builds the server from, as go
	// build takes it: zealgo's own command (MainPackage) for a new
	// application, or the application's main package ("./cmd/app").
	Main string
}

// MainPackage is the package of the zealgo command, which serves a new
// application.
const MainPackage = ModulePath + "/cmd/zealgo"

// NewData returns the data for an application with the module path
// modPath; its Zealgo is the caller's to set (Running).
func NewData(modPath string) (Data, error) {
	if err := module.CheckPath(modPath); err != nil {
		return Data{}, fmt.Errorf("zealgo: new: module path: %w", err)
	}
	prefix, _, _ := module.SplitPathVersion(modPath)
	name := strings.ToLower(path.Base(prefix))
	return Data{Module: modPath, Name: name, GoVersion: GoVersion, Main: MainPackage}, nil
}

// notName matches what a module path element may not hold.
var notName = regexp.MustCompile(`[^a-z0-9._~-]+`)

// DefaultModule returns the module path for an application in dir:
// example.com/<the directory's name>, lowercased, with characters a module
// path does not take replaced by "-".
func DefaultModule(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("zealgo: new: %w", err)
	}
	name := strings.Trim(notName.ReplaceAllString(strings.ToLower(filepath.Base(abs)), "-"), "-.~")
	p := "example.com/" + name
	if name == "" || module.CheckPath(p) != nil {
		return "", fmt.Errorf("zealgo: new: no module path can be made from the name %q: give one with --module", filepath.Base(abs))
	}
	return p, nil
}

// Write writes the application into dir, which must be missing or empty,
// and returns the files written, slash-separated and relative to dir.
func Write(dir string, d Data) ([]string, error) {
	if err := emptyDir(dir); err != nil {
		return nil, err
	}
	mod, err := goMod(d)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644); err != nil {
		return nil, fmt.Errorf("zealgo: new: %w", err)
	}
	written := []string{"go.mod"}
	err = fs.WalkDir(files, "files", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, data, err := render(p, d)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("zealgo: new: %w", err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("zealgo: new: %w", err)
		}
		written = append(written, rel)
		return nil
	})
	return written, err
}

// goMod returns the application's go.mod: its module path and go line,
// the framework required, and replaced when it is a source checkout.
func goMod(d Data) ([]byte, error) {
	f := &modfile.File{}
	err := errors.Join(f.AddModuleStmt(d.Module), f.AddGoStmt(d.GoVersion), f.AddRequire(ModulePath, d.Zealgo.Version))
	if err == nil && d.Zealgo.ReplacePath != "" {
		err = f.AddReplace(ModulePath, "", d.Zealgo.ReplacePath, d.Zealgo.ReplaceVersion)
	}
	if err != nil {
		return nil, fmt.Errorf("zealgo: new: go.mod: %w", err)
	}
	if d.Zealgo.Local() {
		r := f.Replace[0].Syntax
		r.Before = append(r.Before,
			modfile.Comment{Token: "// zealgo new ran a zealgo built from this source checkout; for a released"},
			modfile.Comment{Token: "// version, drop this line and run go get github.com/zealgo/zealgo@VERSION"})
	}
	f.Cleanup()
	return modfile.Format(f.Syntax), nil
}

// render returns the name and contents of the embedded file p, a template
// executed with d when its name ends in ".tmpl".
func render(p string, d Data) (string, []byte, error) {
	src, err := files.ReadFile(p)
	if err != nil {
		return "", nil, fmt.Errorf("zealgo: new: %w", err)
	}
	rel := strings.TrimPrefix(p, "files/")
	rel, isTmpl := strings.CutSuffix(rel, ".tmpl")
	if !isTmpl {
		return rel, src, nil
	}
	t, err := template.New(rel).Option("missingkey=error").Parse(string(src))
	if err != nil {
		return "", nil, fmt.Errorf("zealgo: new: template %s: %w", p, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, d); err != nil {
		return "", nil, fmt.Errorf("zealgo: new: template %s: %w", p, err)
	}
	return rel, out.Bytes(), nil
}

// emptyDir makes dir when it is missing, and refuses it when it is not an
// empty directory.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("zealgo: new: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("zealgo: new: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("zealgo: new: %s is not empty (it holds %s): give a new or empty directory", dir, entries[0].Name())
	}
	return nil
}
