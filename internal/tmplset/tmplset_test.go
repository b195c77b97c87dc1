package tmplset_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/internal/tmplset"
)

func newSet(t *testing.T, files map[string]string) (*tmplset.Set, string) {
	t.Helper()
	dir := filepath.Join(testutil.WriteTree(t, files), "template")
	s := tmplset.New(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDefinesOfTheRenderedFileWin: every file is in every set, and the
// rendered file's {{define}}s override the others'.
func TestDefinesOfTheRenderedFileWin(t *testing.T) {
	s, _ := newSet(t, map[string]string{
		"template/layout.html": `[{{block "content" .}}layout{{end}}]`,
		"template/a.html":      `{{template "layout" .}}{{define "content"}}a {{.}}{{end}}`,
		"template/b.html":      `{{template "layout" .}}{{define "content"}}b{{end}}`,
		"template/plain.html":  `{{template "layout" .}}`,
	})
	for name, want := range map[string]string{"a": "[a &lt;x&gt;]", "b": "[b]", "plain": "[layout]", "/a.html": "[a &lt;x&gt;]"} {
		if got, err := s.Render(name, "<x>"); err != nil || got != want {
			t.Errorf("Render(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestBrokenFileBreaksOnlyItsUsers: a file that does not parse fails
// itself and the pages that call it, named in their error; other pages
// render.
func TestBrokenFileBreaksOnlyItsUsers(t *testing.T) {
	s, _ := newSet(t, map[string]string{
		"template/bad.html":    `{{if}}`,
		"template/uses.html":   `x{{template "bad"}}`,
		"template/fine.html":   `fine`,
		"template/errors.html": `{{define "x"}}{{end}}ok`,
	})
	if got, err := s.Render("fine", nil); err != nil || got != "fine" {
		t.Errorf("fine: %q %v", got, err)
	}
	if _, err := s.Render("bad", nil); err == nil || !strings.Contains(err.Error(), "zealgo: template/bad.html") {
		t.Errorf("bad: %v", err)
	}
	_, err := s.Render("uses", nil)
	if err == nil || !strings.Contains(err.Error(), `no such template "bad"`) || !strings.Contains(err.Error(), "left out") ||
		!strings.Contains(err.Error(), "template/bad.html") {
		t.Errorf("uses: %v", err)
	}
}

// TestNamesAndHiddenFiles: names outside [a-zA-Z0-9_-/] are refused,
// dotfiles, dot directories and other extensions are not templates.
func TestNamesAndHiddenFiles(t *testing.T) {
	s, _ := newSet(t, map[string]string{
		"template/ok.html":          `ok`,
		"template/.hidden.html":     `hidden`,
		"template/.git/x.html":      `git`,
		"template/notes.txt":        `txt`,
		"template/with space.html":  `space`,
		"template/sub/deeper.html":  `deeper`,
		"template/sub/.swap.html":   `swap`,
		"template/sub/Mixed-1.html": `mixed`,
	})
	for name, want := range map[string]string{"ok": "ok", "sub/deeper": "deeper", "sub/Mixed-1": "mixed"} {
		if got, err := s.Render(name, nil); err != nil || got != want {
			t.Errorf("Render(%q) = %q, %v", name, got, err)
		}
	}
	for _, name := range []string{"../x", "a//b", "", ".hidden", "with space", "sub/", "a.b"} {
		if _, err := s.Render(name, nil); err == nil || !strings.Contains(err.Error(), "template name") {
			t.Errorf("Render(%q): %v, want a name error", name, err)
		}
	}
	for _, name := range []string{"notes", "x", "sub/swap"} {
		if _, err := s.Render(name, nil); err == nil || !strings.Contains(err.Error(), "no template") {
			t.Errorf("Render(%q): %v, want no template", name, err)
		}
	}
}

// TestReloadAfterDirectoryRecreated: a directory removed and made again
// is watched again.
func TestReloadAfterDirectoryRecreated(t *testing.T) {
	s, dir := newSet(t, map[string]string{"template/sub/p.html": `v1`})
	render := func() string {
		got, err := s.Render("sub/p", nil)
		if err != nil {
			return err.Error()
		}
		return got
	}
	if got := render(); got != "v1" {
		t.Fatalf("first: %q", got)
	}
	if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "the removal to be seen", func() bool { return strings.Contains(render(), "no template") })
	write(t, filepath.Join(dir, "sub/p.html"), "v2")
	testutil.WaitFor(t, 5*time.Second, "the new directory", func() bool { return render() == "v2" })
	write(t, filepath.Join(dir, "sub/p.html"), "v3")
	testutil.WaitFor(t, 5*time.Second, "a change in the new directory", func() bool { return render() == "v3" })
}

// TestConcurrentRenderWhileEditing: renders from several goroutines while
// a file changes always see a whole version, never an error.
func TestConcurrentRenderWhileEditing(t *testing.T) {
	s, dir := newSet(t, map[string]string{
		"template/layout.html": `[{{block "c" .}}{{end}}]`,
		"template/p.html":      `{{template "layout" .}}{{define "c"}}v0{{end}}`,
	})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := s.Render("p", nil)
				if err != nil || !strings.HasPrefix(got, "[v") || !strings.HasSuffix(got, "]") {
					errs <- fmt.Errorf("render: %q, %v", got, err)
					return
				}
			}
		}()
	}
	for i := 1; i <= 20; i++ {
		// Written whole by rename, as editors save, so that no reader
		// sees half a file.
		tmp := filepath.Join(t.TempDir(), "p.html")
		write(t, tmp, fmt.Sprintf(`{{template "layout" .}}{{define "c"}}v%d{{end}}`, i))
		if err := os.Rename(tmp, filepath.Join(dir, "p.html")); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("[v%d]", i)
		testutil.WaitFor(t, 5*time.Second, "version "+want, func() bool { got, _ := s.Render("p", nil); return got == want })
	}
	testutil.WaitFor(t, 5*time.Second, "the last version", func() bool {
		got, _ := s.Render("p", nil)
		return got == "[v20]"
	})
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestClose: a Set closed before its first Render fails instead of
// starting to watch.
func TestClose(t *testing.T) {
	s, _ := newSet(t, map[string]string{"template/p.html": `p`})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Render("p", nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Render after Close: %v", err)
	}
	var none *tmplset.Set
	if err := none.Close(); err != nil {
		t.Errorf("Close of a nil Set: %v", err)
	}
}
