package host

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Tiered serve (docs/tiered.md). In a module application, the supervisor
// of `serve` (supervise.go) keeps a native build of the application: once
// the Go files have been quiet for the settle time it runs this program's
// `zealgo build` at low priority into <data>/tier, and when the build is
// ready it switches to it: the supervisor starts the built binary as a new
// child on the same socket, which takes over once it is ready, while the
// old child drains (no refused or failed request). The built child serves
// each file compiled while its source is the one it compiled, and
// interprets one saved since (tier_child.go), until the next build
// includes it. In-memory state of the application (package variables,
// caches in handler files, in-process sessions' locks) is that of a new
// process at a switch, as after a restart; sessions, the database and the
// data directory persist.

// TierEnv is set in the environment of a supervised child of tiered serve:
// "1" for an interpreting child, the path of the build's manifest for a
// child that runs a native build.
const TierEnv = "ZEALGO_TIER"

// tierBuildTimeout bounds one background build: a slower one is killed
// and logged, and the current generation keeps serving.
const tierBuildTimeout = 15 * time.Minute

// tierAvailable returns why tiered serve cannot run for the application
// at root, or "" when it can: root holds a go.mod and a Go toolchain is on
// PATH.
func tierAvailable(root string) string {
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "the application is not a Go module (no go.mod at its root)"
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "no Go toolchain (go) on PATH"
	}
	return ""
}

// tierManifest is what a build records beside its binary: the hash of
// every Go file of the module as the build read them, by path relative to
// the module's directory.
type tierManifest struct {
	Gen   int               `json:"gen"`
	Files map[string]string `json:"files"`
}

// tierBuilder keeps the native build of tiered serve, in the supervisor.
type tierBuilder struct {
	exe, root, module, dir string // this program, the root, the module's directory, <data>/tier
	settle                 time.Duration
	log                    *slog.Logger
	switches               chan string // to the supervisor: a build is ready
	kick                   chan string // a file needs a build now

	mu       sync.Mutex
	bin      string // the current build, "" before the first
	manifest string
	gen      int
	prevBin  string // the build before, removed after the next one
	prevMan  string
}

// newTierBuilder returns the builder of a's tiered serve, or nil (having
// said why once) when it cannot run.
func newTierBuilder(a *App, exe string) *tierBuilder {
	if err := a.prepare(); err != nil || a.dirs.module == nil {
		return nil // the child says what is wrong with the root
	}
	if why := tierAvailable(a.dirs.root); why != "" {
		a.Logger().Info("zealgo: serving interpreted only: " + why)
		return nil
	}
	return &tierBuilder{exe: exe, root: a.dirs.root, module: a.dirs.module.Dir, dir: filepath.Join(a.cfg.DataDir, "tier"),
		settle: a.sup.settle, log: a.Logger(), switches: make(chan string, 1), kick: make(chan string, 1)}
}

// command returns the program a new child runs and its tier environment.
func (b *tierBuilder) command() (string, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bin == "" {
		return b.exe, TierEnv + "=1"
	}
	return b.bin, TierEnv + "=" + b.manifest
}

// note takes a child's note: "build REL" asks for a build at once.
func (b *tierBuilder) note(n string) {
	if rel, ok := strings.CutPrefix(n, "build "); ok {
		select {
		case b.kick <- rel:
		default:
		}
	}
}

// run builds after each quiet period until ctx is done.
func (b *tierBuilder) run(ctx context.Context) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		b.log.Error("zealgo tier: file watcher: serving interpreted only", "err", err)
		return
	}
	defer w.Close()
	b.watchTree(w, b.module)
	timer := time.NewTimer(b.settle) // the first build once the start is quiet
	defer timer.Stop()
	changed, due, building := map[string]bool{"(first build)": true}, false, false
	done := make(chan struct{})
	start := func() {
		list := slices.Sorted(maps.Keys(changed))
		changed, due, building = map[string]bool{}, false, true
		go func() { b.build(ctx, list); done <- struct{}{} }()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if b.event(w, ev, changed) {
				timer.Reset(b.settle)
			}
		case err := <-w.Errors:
			b.log.Warn("zealgo tier: file watcher", "err", err)
		case rel := <-b.kick: // a build under way has the file as it was at its start, or a save marks it changed
			if !building {
				b.log.Info("zealgo tier: a file runs compiled only: building now", "file", rel)
				changed[rel], due = true, true
			}
		case <-timer.C:
			due = due || len(changed) > 0
		case <-done:
			building = false
		}
		if due && !building {
			start()
		}
	}
}

// event records a change of a Go file (or go.mod, go.sum) and watches a
// new directory; it reports whether something changed.
func (b *tierBuilder) event(w *fsnotify.Watcher, ev fsnotify.Event, changed map[string]bool) bool {
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
			if !b.skipDir(ev.Name, fi.Name()) {
				// Not on this goroutine: it reads w's channels, and fsnotify
				// may hold the lock Add waits for until its Errors is read.
				go b.watchTree(w, ev.Name)
			}
			return false
		}
	}
	base := filepath.Base(ev.Name)
	if !strings.HasSuffix(base, ".go") && base != "go.mod" && base != "go.sum" || ev.Op == fsnotify.Chmod {
		return false
	}
	rel, _ := filepath.Rel(b.module, ev.Name)
	changed[filepath.ToSlash(rel)] = true
	return true
}

// watchTree watches dir and the directories below it, but for the data
// directory, .zealgo, testdata and hidden ones.
func (b *tierBuilder) watchTree(w *fsnotify.Watcher, dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if p != dir && b.skipDir(p, d.Name()) {
			return filepath.SkipDir
		}
		_ = w.Add(p)
		return nil
	})
}

func (b *tierBuilder) skipDir(path, name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" ||
		path == filepath.Dir(b.dir) || path == b.dir
}

// build makes generation gen+1 and, when it is ready, has the supervisor
// switch to it. A failure is logged; the current generation serves on.
func (b *tierBuilder) build(ctx context.Context, changed []string) {
	b.mu.Lock()
	gen := b.gen + 1
	b.mu.Unlock()
	started := time.Now()
	b.log.Info("zealgo tier: build started", "gen", gen, "changed", strings.Join(changed, " "))
	files, err := b.snapshot()
	if err == nil {
		err = b.runBuild(ctx, gen)
	}
	took := time.Since(started).Round(time.Millisecond)
	if ctx.Err() != nil { // serve stops
		b.log.Info("zealgo tier: build stopped", "gen", gen)
		return
	}
	if err != nil {
		b.log.Error("zealgo tier: build failed: the current generation keeps serving", "gen", gen, "took", took, "err", err)
		return
	}
	man := filepath.Join(b.dir, fmt.Sprintf("app-%d.json", gen))
	data, _ := json.Marshal(tierManifest{Gen: gen, Files: files})
	if err := os.WriteFile(man, data, 0o644); err != nil {
		b.log.Error("zealgo tier: build failed: the current generation keeps serving", "gen", gen, "err", err)
		return
	}
	b.mu.Lock()
	// The build before the current one goes: the current one runs until
	// the switch, and its process may start task workers from it.
	oldBin, oldMan := b.prevBin, b.prevMan
	b.prevBin, b.prevMan = b.bin, b.manifest
	b.bin, b.manifest, b.gen = b.binary(gen), man, gen
	b.mu.Unlock()
	if oldBin != "" {
		os.Remove(oldBin)
		os.Remove(oldMan)
	}
	b.log.Info("zealgo tier: build ready: switching to it", "gen", gen, "took", took, "changed", strings.Join(changed, " "))
	select {
	case b.switches <- fmt.Sprintf("native build %d", gen):
	case <-ctx.Done():
	}
}

func (b *tierBuilder) binary(gen int) string {
	return filepath.Join(b.dir, fmt.Sprintf("app-%d", gen))
}

// runBuild runs `zealgo build` at low priority, its output in the log.
func (b *tierBuilder) runBuild(ctx context.Context, gen int) error {
	ctx, cancel := context.WithTimeout(ctx, tierBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.exe, "build", "--root", b.root, "--dir", filepath.Join(b.dir, "build"),
		"-o", b.binary(gen), "--keep-going")
	cmd.Env = tierBuildEnv()
	ownGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("zealgo: tier: %w", err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("zealgo: tier: %w", err)
	}
	lowerPriority(cmd.Process.Pid)
	tail := b.logBuild(out)
	if err := cmd.Wait(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("zealgo: tier: the build took over %s: %w", tierBuildTimeout, ctx.Err())
		}
		return fmt.Errorf("zealgo: tier: build: %w\n%s", err, strings.Join(tail, "\n"))
	}
	return nil
}

// tierBuildEnv is the environment of a background build: not that of a
// supervised child.
func tierBuildEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, TierEnv+"=") && !strings.HasPrefix(kv, "ZEALGO_SUPERVISED=") {
			env = append(env, kv)
		}
	}
	return env
}

// logBuild logs the build's lines and returns the last ones.
func (b *tierBuilder) logBuild(r io.Reader) []string {
	var tail []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		b.log.Info("zealgo tier: " + line)
		if tail = append(tail, line); len(tail) > 40 {
			tail = tail[1:]
		}
	}
	return tail
}

// snapshot returns the hash of every Go file of the module, before the
// build reads them: a file that differs later was saved since.
func (b *tierBuilder) snapshot() (map[string]string, error) {
	return hashGoFiles(b.module, b.skipDir)
}

// hashGoFiles returns the hex SHA-256 of each .go file below dir (not
// _test.go files), by slash-separated path relative to dir.
func hashGoFiles(dir string, skip func(path, name string) bool) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != dir && skip(p, d.Name()):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go"):
			return nil
		}
		h, err := hashFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = h
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("zealgo: tier: %w", err)
	}
	return out, nil
}

// hashFile returns the hex SHA-256 of the file at path.
func hashFile(path string) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:]), nil
}
