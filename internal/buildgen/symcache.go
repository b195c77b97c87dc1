package buildgen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/zealgo/zealgo/internal/symgen"
)

// The symbol tables of a build (symgen.go) are kept in a cache shared by
// every build on the machine, `zealgo build` and serve's background
// builds alike, under <cache>/symbols/<key>/ (<cache> is Options.CacheDir,
// by default os.UserCacheDir()/zealgo): a manifest and the tables' files.
// The key is a hash of all that the tables are made from: the packages
// extracted; the module version of each of them and of every package they
// import, or, for a package in no versioned module (a replace by a
// directory), its files' contents; the generator's output format
// (symgen.Format); the Go toolchain's version and the platform; and
// zealgo's version. A change to any of them, a version bump in go.mod
// say, makes another key, whose tables are generated again. An entry
// unused for symCacheTTL is removed by the next build that stores one.

// symCacheFormat changes when the tables or the cache's layout do (2: the
// manifest holds each table's SHA-256).
const symCacheFormat = "zealgo-symbols-2"

// symCacheTTL is how long an unused cache entry is kept.
const symCacheTTL = 30 * 24 * time.Hour

// symManifest is an entry's manifest.json: the tables, by file name, with
// the SHA-256 of each, and the packages left out, with the reason, to say
// again at each build.
type symManifest struct {
	Tables map[string]string // file -> import path
	Sums   map[string]string // file -> hex SHA-256 of its content
	Left   []symLeft
}

// symLeft is a package that has no table.
type symLeft struct{ Path, Why string }

// cacheDir returns the directory of the symbol cache, "" if there is none.
func (g *generator) cacheDir() string {
	if g.opts.CacheDir != "" {
		return filepath.Join(g.opts.CacheDir, "symbols")
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "zealgo", "symbols")
}

// symbolKey returns the key the tables of the packages extract are cached
// under; all is the packages loaded.
func (g *generator) symbolKey(ctx context.Context, extract []string, all []*packages.Package) (string, error) {
	var env bytes.Buffer
	if err := g.goCmdTo(ctx, &env, "env", "GOVERSION", "GOOS", "GOARCH"); err != nil {
		return "", err
	}
	lines := []string{symCacheFormat, "zealgo " + zealgoVersion(), "go " + strings.Join(strings.Fields(env.String()), " "),
		"extractor " + symgen.Format, "extract " + strings.Join(extract, " ")}
	seen := map[string]bool{}
	var walk func(p *packages.Package) error
	walk = func(p *packages.Package) error {
		if seen[p.PkgPath] {
			return nil
		}
		seen[p.PkgPath] = true
		if p.Module != nil { // not the standard library, which the Go version is
			id, err := packageID(p)
			if err != nil {
				return err
			}
			lines = append(lines, p.PkgPath+" "+id)
		}
		for _, dep := range p.Imports {
			if err := walk(dep); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range all {
		if err := walk(p); err != nil {
			return "", err
		}
	}
	slices.Sort(lines[5:])
	return hashOf([]byte(strings.Join(lines, "\n")))[:32], nil
}

// packageID identifies the source of p: its module's version, or the
// hash of its files for a module with none.
func packageID(p *packages.Package) (string, error) {
	m := p.Module
	if m.Replace != nil {
		m = m.Replace
	}
	if m.Version != "" {
		return m.Path + "@" + m.Version, nil
	}
	h := sha256.New()
	for _, f := range p.GoFiles {
		src, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("zealgo: build: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(src))
		h.Write(src)
	}
	return "files " + hex.EncodeToString(h.Sum(nil)), nil
}

// zealgoVersion is the version of zealgo this program was built with,
// "devel" for one built from a source tree: this package's code then
// comes with the tree, and symCacheFormat says when its output changes.
func zealgoVersion() string {
	zealgo := strings.TrimSuffix(hostPath, "/host")
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	var m *debug.Module
	if bi.Main.Path == zealgo {
		m = &bi.Main
	}
	for _, d := range bi.Deps {
		if d.Path == zealgo {
			m = d
		}
	}
	if m == nil || m.Replace != nil || m.Version == "" || m.Version == "(devel)" {
		return "devel"
	}
	return m.Version
}

// hashOf returns the hex SHA-256 of data.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// loadSymbols copies the tables of the entry key into the generated
// package and returns its manifest; ok is false if there is no entry. An
// entry that is not whole (a manifest that does not parse, a table
// missing or whose content is not the one its manifest hashed: a disk
// error, a hand edit) is removed, so that this build generates the tables
// again and stores a good entry in its place.
func (g *generator) loadSymbols(key string) (m symManifest, ok bool) {
	dir := filepath.Join(g.cacheDir(), key)
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return symManifest{}, false
	}
	bad := func(why string) (symManifest, bool) {
		fmt.Fprintf(g.opts.Stderr, "zealgo build: the cached interpreter symbols are damaged (%s): generating them again\n", why)
		_ = os.RemoveAll(filepath.Join(g.opts.Dir, symbolsDir))
		_ = os.RemoveAll(dir)
		return symManifest{}, false
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return bad("manifest.json: " + err.Error())
	}
	for name := range m.Tables {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return bad(err.Error())
		}
		if hashOf(src) != m.Sums[name] {
			return bad(name + ": its content is not the one stored")
		}
		if err := g.write(symbolsDir+"/"+name, src); err != nil {
			_ = os.RemoveAll(filepath.Join(g.opts.Dir, symbolsDir))
			return symManifest{}, false
		}
	}
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, "manifest.json"), now, now) // in use
	return m, true
}

// storeSymbols keeps the generated tables, as m lists them, under key:
// written to a directory of its own, renamed into place at once, so that
// builds running together never see half an entry. It then removes the
// entries unused for symCacheTTL. A cache that cannot be written is not
// an error: the next build generates the tables again.
func (g *generator) storeSymbols(key string, m symManifest) {
	root := g.cacheDir()
	if root == "" || os.MkdirAll(root, 0o755) != nil {
		return
	}
	tmp, err := os.MkdirTemp(root, key+".tmp-")
	if err != nil {
		return
	}
	defer os.RemoveAll(tmp)
	m.Sums = map[string]string{}
	for name := range m.Tables {
		src, err := os.ReadFile(filepath.Join(g.opts.Dir, symbolsDir, name))
		if err != nil || os.WriteFile(filepath.Join(tmp, name), src, 0o644) != nil {
			return
		}
		m.Sums[name] = hashOf(src)
	}
	data, err := json.MarshalIndent(m, "", "\t")
	if err != nil || os.WriteFile(filepath.Join(tmp, "manifest.json"), data, 0o644) != nil {
		return
	}
	if err := os.Rename(tmp, filepath.Join(root, key)); err != nil && !errors.Is(err, fs.ErrExist) {
		fmt.Fprintf(g.opts.Stderr, "zealgo build: the interpreter symbols are not cached: %v\n", err)
	}
	pruneSymbols(root, key)
}

// pruneSymbols removes the entries of root but keep unused for
// symCacheTTL, and what a build that stopped midway left.
func pruneSymbols(root, keep string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		fi, err := os.Stat(filepath.Join(dir, "manifest.json"))
		if err != nil {
			fi, err = e.Info()
		}
		if e.Name() != keep && err == nil && time.Since(fi.ModTime()) > symCacheTTL {
			_ = os.RemoveAll(dir)
		}
	}
}
