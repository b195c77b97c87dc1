package host_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

const versionHandler = `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var version = func(api *host.API) any { return map[string]any{"v": %d} }
`

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReloadUnderLoad edits a handler file while clients keep asking for
// it: every answer is the old or the new version, none fails, and the new
// one arrives without a restart.
func TestReloadUnderLoad(t *testing.T) {
	ta := newTestApp(t, map[string]string{"api/version.go": fmt.Sprintf(versionHandler, 1)})
	srv, root := ta.srv, ta.root
	url := srv.URL + "/api/version"
	if code, body := get(t, url); code != 200 || body != `{"v":1}` {
		t.Fatalf("before edit: %d %s", code, body)
	}

	var stop atomic.Bool
	var failures, served atomic.Int64
	var bad sync.Map
	var wg sync.WaitGroup
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20000 && !stop.Load(); i++ {
				resp, err := http.Get(url)
				if err != nil {
					failures.Add(1)
					bad.Store(err.Error(), true)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				served.Add(1)
				if resp.StatusCode != 200 || (string(b) != `{"v":1}` && string(b) != `{"v":2}` && string(b) != `{"v":3}`) {
					failures.Add(1)
					bad.Store(fmt.Sprintf("%d %s", resp.StatusCode, b), true)
				}
			}
		}()
	}
	testutil.WaitFor(t, 10*time.Second, "the clients' first answers", func() bool { return served.Load() >= 8 })
	// An in-place rewrite (truncate, then write), as most editors save.
	if err := os.WriteFile(filepath.Join(root, "api/version.go"), []byte(fmt.Sprintf(versionHandler, 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "version 2", func() bool { _, b := get(t, url); return b == `{"v":2}` })
	// An atomic save: write a temporary file, rename it over the old one.
	tmp := filepath.Join(root, "api/.version.go.tmp")
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf(versionHandler, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(root, "api/version.go")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "version 3", func() bool { _, b := get(t, url); return b == `{"v":3}` })
	stop.Store(true)
	wg.Wait()
	if failures.Load() > 0 {
		var msgs []string
		bad.Range(func(k, _ any) bool { msgs = append(msgs, k.(string)); return true })
		t.Fatalf("%d of %d requests failed during the edits: %s", failures.Load(), served.Load(), strings.Join(msgs, "; "))
	}
	if served.Load() == 0 {
		t.Fatal("no request was served during the edits")
	}
}

// TestReloadCreateBreakDelete: a new file is served at once, a broken edit
// shows its compile error (with --dev), a fix is picked up, a deleted file
// is 404.
func TestReloadCreateBreakDelete(t *testing.T) {
	ta := newTestApp(t, map[string]string{"api/keep.go": fmt.Sprintf(versionHandler, 0)}, host.WithDev(true))
	srv, root := ta.srv, ta.root
	path := filepath.Join(root, "api/fresh/version.go")
	url := srv.URL + "/api/fresh/version"
	if code, _ := get(t, url); code != 404 {
		t.Fatalf("before create: %d", code)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(fmt.Sprintf(versionHandler, 7)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, url); code != 200 || body != `{"v":7}` {
		t.Fatalf("after create: %d %s", code, body)
	}
	broken := strings.Replace(fmt.Sprintf(versionHandler, 8), "return", "retrun", 1)
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "the compile error", func() bool {
		code, body := get(t, url)
		return code == 500 && strings.Contains(body, `"handler_compile_error"`) && strings.Contains(body, "api/fresh/version.go:7:")
	})
	if err := os.WriteFile(path, []byte(fmt.Sprintf(versionHandler, 9)), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "the fix", func() bool { _, b := get(t, url); return b == `{"v":9}` })
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "404 after delete", func() bool { c, _ := get(t, url); return c == 404 })
}
