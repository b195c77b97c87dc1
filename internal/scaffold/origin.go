package scaffold

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// ModulePath is the framework's module path, which a new application
// requires.
const ModulePath = "github.com/zealgo/zealgo"

// GoVersion is the go line of a new application's go.mod: the go line of
// the framework's own go.mod, the oldest Go that builds it (a test keeps
// the two equal).
const GoVersion = "1.26.8"

// SourceEnv is the environment variable naming a zealgo source checkout:
// when set, a new application's go.mod replaces the framework with it.
const SourceEnv = "ZEALGO_SOURCE"

// zeroVersion is the version required of a module that a replace
// directive points at a directory, as the go command writes it.
const zeroVersion = "v0.0.0-00010101000000-000000000000"

// Framework is the zealgo a new application requires: the running
// binary's.
type Framework struct {
	// Version is the version of the require line.
	Version string
	// ReplacePath and ReplaceVersion are the right-hand side of a replace
	// directive: an absolute directory (a source checkout) and no version,
	// or another module and its version; empty for none.
	ReplacePath, ReplaceVersion string
}

// Local tells that the framework is a source checkout, ReplacePath.
func (f Framework) Local() bool { return f.ReplacePath != "" && f.ReplaceVersion == "" }

// Running returns the zealgo that built the running binary: a released
// version as is (the build information holds its checksum); a build from
// a source checkout (no checksum: version "(devel)" or one stamped from
// version control) with a replace directive to that checkout, found from
// $ZEALGO_SOURCE, else from the directory this package was compiled from,
// else above the executable. $ZEALGO_SOURCE, when set, wins in every case.
func Running() (Framework, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Framework{}, errors.New("zealgo: new: the binary carries no build information; set " + SourceEnv + " to a zealgo checkout")
	}
	var candidates []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		candidates = append(candidates, filepath.Dir(filepath.Dir(filepath.Dir(file))))
	}
	if exe, err := os.Executable(); err == nil {
		for d := filepath.Dir(exe); ; d = filepath.Dir(d) {
			candidates = append(candidates, d)
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return fromBuild(bi, os.Getenv(SourceEnv), candidates)
}

// fromBuild works out the framework from the build information bi, the
// value of $ZEALGO_SOURCE and the directories that may hold the checkout
// the binary was built from, in order.
func fromBuild(bi *debug.BuildInfo, source string, candidates []string) (Framework, error) {
	m := frameworkModule(bi)
	if m == nil {
		return Framework{}, fmt.Errorf("zealgo: new: the binary does not link %s; set %s to a zealgo checkout", ModulePath, SourceEnv)
	}
	if source != "" {
		dir, err := checkout(source)
		if err != nil {
			return Framework{}, fmt.Errorf("zealgo: new: $%s: %w", SourceEnv, err)
		}
		return local(m.Version, dir), nil
	}
	r := m.Replace
	switch {
	case r == nil && m.Sum != "": // a released version, from the module proxy
		return Framework{Version: m.Version}, nil
	case r != nil && r.Sum != "": // replaced by another module's released version
		return Framework{Version: requireVersion(m.Version), ReplacePath: r.Path, ReplaceVersion: r.Version}, nil
	case r != nil && filepath.IsAbs(r.Path): // replaced by a directory
		candidates = append([]string{r.Path}, candidates...)
	}
	for _, c := range candidates {
		if dir, err := checkout(c); err == nil {
			return local(m.Version, dir), nil
		}
	}
	return Framework{}, fmt.Errorf("zealgo: new: this zealgo (%s) was built from a source checkout that is not found; set %s to it",
		m.Version, SourceEnv)
}

// frameworkModule returns the framework's module in bi: the main module
// (cmd/zealgo) or a dependency (an application's own main).
func frameworkModule(bi *debug.BuildInfo) *debug.Module {
	if bi.Main.Path == ModulePath {
		return &bi.Main
	}
	for _, d := range bi.Deps {
		if d.Path == ModulePath {
			return d
		}
	}
	return nil
}

// local is the framework at the checkout dir, built as version.
func local(version, dir string) Framework {
	return Framework{Version: requireVersion(version), ReplacePath: dir}
}

// requireVersion turns a build's version into one a require line takes:
// a stamped version without "+dirty", or the zero pseudo-version.
func requireVersion(v string) string {
	v, _ = strings.CutSuffix(v, "+dirty")
	if semver.IsValid(v) && module.Check(ModulePath, v) == nil {
		return v
	}
	return zeroVersion
}

// checkout returns the absolute directory dir when it holds the
// framework's go.mod.
func checkout(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(abs, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("%s is no zealgo checkout: %w", dir, err)
	}
	if p := modfile.ModulePath(data); p != ModulePath {
		return "", fmt.Errorf("%s is no zealgo checkout: its go.mod declares %q", dir, p)
	}
	return abs, nil
}
