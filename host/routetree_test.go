package host

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkRouteResolve is the route cache's part of a request: a hit for
// an exact file and for a parameter file, whose entry holds the value.
func BenchmarkRouteResolve(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "api")
	writeFiles(b, dir, "bench/noop.go", "bench/[id].go")
	t := newRouteTree(dir, "api", nil, slog.Default())
	b.Cleanup(func() { t.close() })
	var c routeCache
	for _, tc := range []struct{ name, target string }{{"static", "/api/bench/noop"}, {"param", "/api/bench/how-to-train"}} {
		r := httptest.NewRequest(http.MethodGet, tc.target, nil)
		if rt, e := c.resolve(dir, t, r); e != nil || (tc.name == "param") != (len(rt.params) == 1) {
			b.Fatalf("%s: %+v %v", tc.target, rt, e)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, e := c.resolve(dir, t, r); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}

// writeFiles makes the files (empty) and directories under dir.
func writeFiles(t testing.TB, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, "/") {
			continue
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRouteCacheParams: the route cache stays a table of routeCacheSize
// paths however many values clients send, and each slot's route holds
// the values of its own path.
func TestRouteCacheParams(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "api")
	writeFiles(t, dir, "articles/[slug].go", "articles/[slug]/comments/[id].go")
	tree := newRouteTree(dir, "api", nil, slog.Default())
	defer tree.close()
	var c routeCache
	for i := range 4 * routeCacheSize {
		target := "/api/articles/a" + strconv.Itoa(i) + "/comments/" + strconv.Itoa(i%7)
		rt, e := c.resolve(dir, tree, httptest.NewRequest(http.MethodGet, target, nil))
		if e != nil || len(rt.params) != 2 || rt.params[0].value != "a"+strconv.Itoa(i) {
			t.Fatalf("%s: %+v %v", target, rt, e)
		}
	}
	n := 0
	for i := range c.slots {
		e := c.slots[i].Load()
		if e == nil {
			continue
		}
		n++
		slug, id, _ := strings.Cut(strings.TrimPrefix(e.key, "/api/articles/"), "/comments/")
		want := []routeParam{{"slug", slug}, {"id", id}}
		if !reflect.DeepEqual(e.rt.params, want) || e.rt.file != filepath.Join(dir, "articles", "[slug]", "comments", "[id].go") {
			t.Fatalf("slot %d: %+v for %s", i, e.rt, e.key)
		}
	}
	if n > routeCacheSize || n < routeCacheSize/2 {
		t.Fatalf("%d entries, want at most %d and most slots used", n, routeCacheSize)
	}
}

// TestRouteTreeSymlinkLoop: symlinks that make loops inside api/ neither
// hang a search (backtracking through [a] and x at every segment) nor the
// start-up walk of conflicts.
func TestRouteTreeSymlinkLoop(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "api")
	writeFiles(t, dir, "sub/ok.go")
	for _, name := range []string{"x", "[a]"} {
		if err := os.Symlink(".", filepath.Join(dir, "sub", name)); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	tree := newRouteTree(dir, "api", nil, slog.Default())
	defer tree.close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c := tree.conflicts(); len(c) != 0 {
			t.Errorf("conflicts: %v", c)
		}
		target := "/api/sub" + strings.Repeat("/x", 200) + "/missing"
		if rt, e := tree.resolveAPI(dir, httptest.NewRequest(http.MethodGet, target, nil)); e != nil || len(rt.params) != 0 {
			t.Errorf("%s: %+v %v", target, rt, e)
		}
		target = "/api/sub/x/y/ok"
		if rt, e := tree.resolveAPI(dir, httptest.NewRequest(http.MethodGet, target, nil)); e != nil ||
			!reflect.DeepEqual(rt.params, []routeParam{{"a", "y"}}) {
			t.Errorf("%s: %+v %v", target, rt, e)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the search did not end")
	}
}

// FuzzRouteParams: whatever the request target, resolution with route
// parameters never panics, names a file inside the api directory that
// exists, holds values that are no empty, ".", ".." or slash-holding
// segment, lets an existing exact file win, and, when no parameter
// serves the path, answers as resolveAPI does.
func FuzzRouteParams(f *testing.F) {
	for _, s := range []string{"/api/articles/how-to", "/api/articles/feed", "/api/articles/x/comments/7",
		"/api/files/a/b/c", "/api/users/me/posts", "/api/users/me/settings", "/api/articles/a%2Fb",
		"/api/articles/%2e%2e", "/api/files/a/../b", "/api/articles/zo%C3%AB", "/api/x%00"} {
		f.Add(s)
	}
	dir := filepath.Join(f.TempDir(), "api")
	writeFiles(f, dir, "articles/[slug].go", "articles/feed.go", "articles/[slug]/comments/[id].go",
		"files/[...path].go", "users/me/settings.go", "users/[id]/posts.go")
	tree := newRouteTree(dir, "api", nil, slog.Default())
	f.Cleanup(func() { tree.close() })
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		r := &http.Request{Method: "GET", URL: u}
		rt, e := tree.resolveAPI(dir, r)
		plain, pe := resolveAPI(dir, r)
		_, statErr := os.Stat(plain.file)
		switch {
		case e != nil && (e.Status != 400 && e.Status != 404 || !reflect.DeepEqual(e, pe)):
			t.Fatalf("%q: %+v, without parameters %+v", target, e, pe)
		case e != nil:
			return
		case pe == nil && statErr == nil && !reflect.DeepEqual(rt, plain):
			t.Fatalf("%q: %+v, but the exact file %s exists", target, rt, plain.file)
		case len(rt.params) == 0 && (!reflect.DeepEqual(rt, plain) || pe != nil):
			t.Fatalf("%q: %+v, without parameters %+v %v", target, rt, plain, pe)
		case len(rt.params) == 0:
			return
		}
		if !within(dir, rt.file) || filepath.Clean(rt.file) != rt.file {
			t.Fatalf("%q resolves to %q, outside %q", target, rt.file, dir)
		}
		if _, err := os.Stat(rt.file); err != nil {
			t.Fatalf("%q resolves to %q: %v", target, rt.file, err)
		}
		for _, p := range rt.params {
			if p.name != "path" && !paramValue(p.value) || p.name == "path" && !allParamValues(strings.Split(p.value, "/")) {
				t.Fatalf("%q: value %q of %s", target, p.value, p.name)
			}
		}
	})
}

// TestRouteParamSymlinkOut: a [name] directory or file that is a symlink
// leading out of api/ serves nothing.
func TestRouteParamSymlinkOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "api")
	outside := t.TempDir()
	writeFiles(t, dir, "in/ok.go")
	writeFiles(t, outside, "secret.go", "x.go")
	for link, target := range map[string]string{"[x]": outside, "in/[name].go": filepath.Join(outside, "secret.go")} {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(link))); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	tree := newRouteTree(dir, "api", nil, slog.Default())
	defer tree.close()
	for _, target := range []string{"/api/anything/secret", "/api/in/secret", "/api/in/other"} {
		rt, e := tree.resolveAPI(dir, httptest.NewRequest(http.MethodGet, target, nil))
		if e != nil || len(rt.params) != 0 || strings.Contains(rt.file, "[") {
			t.Errorf("%s: %+v %v", target, rt, e)
		}
	}
}
