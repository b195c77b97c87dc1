// Package tmplset is zealgo's template engine: the html/template set of a
// directory (template/ of an application), read on first use and read
// again after any file under it changes (created, written, removed,
// renamed), as fsnotify reports.
//
// The name of a template is its path below the directory without
// ".html" ("home", "errors/404"), and every file is defined under its name
// in the set of every other, so a page can use a layout:
//
//	template/layout.html:  <html><body>{{block "content" .}}{{end}}</body></html>
//	template/home.html:    {{template "layout" .}}{{define "content"}}<h1>{{.Title}}</h1>{{end}}
//
// Rendering name parses name last, so its {{define}}s win over those of the
// other files. A file that does not parse breaks only the pages that use
// it. Errors name files as template/<name>.html.
package tmplset

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
)

// Set is the template set of one directory, read again after a change.
// It is safe for use by several goroutines.
type Set struct {
	dir string
	log *slog.Logger

	mu      sync.Mutex
	watcher *fsnotify.Watcher
	watched map[string]bool
	closed  bool
	cur     *tplSnapshot

	gen atomic.Uint64 // bumped by every change under dir
}

// tplSnapshot is the templates read at one generation.
type tplSnapshot struct {
	gen   uint64
	files map[string]string // name -> source
	names []string          // sorted

	mu     sync.Mutex
	sets   map[string]*template.Template
	broken map[string]error // files that do not parse; nil until first needed
}

// New returns the set of the templates under dir; log (default
// slog.Default()) receives the file watcher's errors. Nothing is read
// until the first Render, and dir need not exist until then.
func New(dir string, log *slog.Logger) *Set {
	if log == nil {
		log = slog.Default()
	}
	return &Set{dir: dir, log: log}
}

// Close stops watching the directory: afterwards Render serves the
// templates as last read, or fails when none are ready. t may be nil.
func (t *Set) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.watcher != nil {
		return t.watcher.Close()
	}
	return nil
}

// Render executes the template name ("home", "errors/404"; a leading "/"
// and a trailing ".html" are dropped) with data and returns the result.
// Nothing is returned when execution fails part way.
func (t *Set) Render(name string, data any) (string, error) {
	name = strings.TrimSuffix(strings.TrimPrefix(name, "/"), ".html")
	if !validTemplateName(name) {
		return "", fmt.Errorf("zealgo: template name %q: use letters, digits, _, - and / (e.g. \"home\" or \"errors/404\")", name)
	}
	snap, err := t.snapshot()
	if err != nil {
		return "", err
	}
	set, err := snap.set(name)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := set.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("zealgo: template %s: %w%s", name, err, snap.brokenNote())
	}
	return b.String(), nil
}

// validTemplateName reports whether every segment of name is non-empty
// and made of [a-zA-Z0-9_-].
func validTemplateName(name string) bool {
	for _, s := range strings.Split(name, "/") {
		if s == "" {
			return false
		}
		for _, c := range s {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				return false
			}
		}
	}
	return true
}

// snapshot returns the templates as they are now on disk, reading them
// again if anything changed since the last read.
func (t *Set) snapshot() (*tplSnapshot, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur != nil && t.cur.gen == t.gen.Load() {
		return t.cur, nil
	}
	if t.closed {
		return nil, errors.New("zealgo: templates: the application is closed")
	}
	if t.watcher == nil {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, fmt.Errorf("zealgo: templates: file watcher: %w", err)
		}
		t.watcher, t.watched = w, map[string]bool{}
		go t.watch(w)
	}
	gen := t.gen.Load() // before reading: a change while reading makes another read
	snap := &tplSnapshot{gen: gen, files: map[string]string{}, sets: map[string]*template.Template{}}
	err := filepath.WalkDir(t.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != t.dir {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if !t.watched[p] {
				if err := t.watcher.Add(p); err != nil {
					return fmt.Errorf("zealgo: templates: watching %s: %w", p, err)
				}
				t.watched[p] = true
			}
			return nil
		}
		if !strings.HasSuffix(p, ".html") {
			return nil
		}
		rel, _ := filepath.Rel(t.dir, p)
		name := strings.TrimSuffix(filepath.ToSlash(rel), ".html")
		if !validTemplateName(name) {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		snap.files[name] = string(src)
		snap.names = append(snap.names, name)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("zealgo: templates: no directory %s: %w", t.dir, err)
	}
	if err != nil {
		return nil, err
	}
	t.cur = snap
	return snap, nil
}

// watch bumps the generation on every change under the template directory.
func (t *Set) watch(w *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				t.mu.Lock()
				delete(t.watched, filepath.Clean(ev.Name))
				t.mu.Unlock()
			}
			t.gen.Add(1)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			t.log.Error("zealgo: template watcher", "err", err)
			t.gen.Add(1)
		}
	}
}

// set returns the template set for rendering name: every file, name last.
// A file that does not parse is left out of the sets of the others (and
// named in their execution errors), so that one broken template breaks
// only the pages that use it.
func (s *tplSnapshot) set(name string) (*template.Template, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.sets[name]; t != nil {
		return t, nil
	}
	src, ok := s.files[name]
	if !ok {
		return nil, fmt.Errorf("zealgo: no template %q (template/%s.html)", name, name)
	}
	if s.broken == nil {
		s.broken = map[string]error{}
		for _, n := range s.names {
			if _, err := template.New(n).Parse(s.files[n]); err != nil {
				s.broken[n] = fmt.Errorf("zealgo: template/%s.html: %w", n, err)
			}
		}
	}
	if err := s.broken[name]; err != nil {
		return nil, err
	}
	set := template.New("")
	for _, n := range s.names {
		if n == name || s.broken[n] != nil {
			continue
		}
		if _, err := set.New(n).Parse(s.files[n]); err != nil {
			return nil, fmt.Errorf("zealgo: template/%s.html: %w", n, err)
		}
	}
	if _, err := set.New(name).Parse(src); err != nil {
		return nil, fmt.Errorf("zealgo: template/%s.html: %w", name, err)
	}
	s.sets[name] = set
	return set, nil
}

// brokenNote names the templates that do not parse, for an execution error.
func (s *tplSnapshot) brokenNote() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var notes []string
	for _, n := range s.names {
		if err := s.broken[n]; err != nil {
			notes = append(notes, err.Error())
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return " (left out, as they do not parse: " + strings.Join(notes, "; ") + ")"
}
