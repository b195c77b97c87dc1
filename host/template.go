package host

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

// Templates: template/<name>.html, rendered with html/template. The name
// of a template is its path below template/ without ".html" ("home",
// "errors/404"), and every file is defined under its name in the set of
// every other, so a page can use a layout:
//
//	template/layout.html:  <html><body>{{block "content" .}}{{end}}</body></html>
//	template/home.html:    {{template "layout" .}}{{define "content"}}<h1>{{.Title}}</h1>{{end}}
//
// Rendering name parses name last, so its {{define}}s win over those of the
// other files. Templates are read on first use and read again after any
// file under template/ changes (created, written, removed, renamed).

// Render executes template/<name>.html with data and returns the result as
// a value for the return contract: the HTML as a string, or an error (a
// missing template, a parse or execution failure), which is a 500 when a
// page or handler returns it:
//
//	var index = func(app *host.App) any { return app.Render("home", map[string]any{"Title": "Hi"}) }
func (a *App) Render(name string, data any) any {
	html, err := a.RenderHTML(name, data)
	if err != nil {
		return err
	}
	return html
}

// RenderHTML executes template/<name>.html with data and returns the HTML.
// Nothing is returned when execution fails part way.
func (a *App) RenderHTML(name string, data any) (string, error) {
	if err := a.init(); err != nil {
		return "", err
	}
	return a.pub.tpl.render(name, data)
}

// templates is the template set of an App, rebuilt after a change.
type templates struct {
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

func (t *templates) init(dir string, log *slog.Logger) {
	t.dir, t.log = dir, log
}

func (t *templates) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.watcher != nil {
		return t.watcher.Close()
	}
	return nil
}

// render executes the template name with data.
func (t *templates) render(name string, data any) (string, error) {
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

func validTemplateName(name string) bool {
	for _, s := range strings.Split(name, "/") {
		if !validName(s) {
			return false
		}
	}
	return true
}

// snapshot returns the templates as they are now on disk, reading them
// again if anything changed since the last read.
func (t *templates) snapshot() (*tplSnapshot, error) {
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
func (t *templates) watch(w *fsnotify.Watcher) {
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
