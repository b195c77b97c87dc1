package host

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseAPIPath(t *testing.T) {
	for _, tc := range []struct {
		rest, module, action, code string
	}{
		{"/device/list", "device", "list", ""},
		{"/users", "", "users", ""},
		{"/admin/users/delete", "admin/users", "delete", ""},
		{"/a-b_c/D9", "a-b_c", "D9", ""},
		{"", "", "", CodeMethodNotFound},
		{"/", "", "", CodeMethodNotFound},
		{"/../x", "", "", CodeInvalidModule},
		{"/%2e%2e/x", "", "", CodeInvalidModule},
		{"/x/%2E", "", "", CodeInvalidRequest},
		{"/a%2fb", "", "", CodeInvalidRequest},
		{"/a%2Fb/c", "", "", CodeInvalidModule},
		{"/a%5cb", "", "", CodeInvalidRequest},
		{"/a\\b", "", "", CodeInvalidRequest},
		{"/a%00", "", "", CodeInvalidRequest},
		{"//x", "", "", CodeInvalidModule},
		{"/x/", "", "", CodeInvalidRequest},
		{"/x.go", "", "", CodeInvalidRequest},
		{"/%zz", "", "", CodeInvalidRequest},
		{"/é/x", "", "", CodeInvalidModule},
	} {
		module, action, e := parseAPIPath(tc.rest)
		code := ""
		if e != nil {
			code = e.Code
		}
		if module != tc.module || action != tc.action || code != tc.code {
			t.Errorf("parseAPIPath(%q) = %q, %q, %q; want %q, %q, %q", tc.rest, module, action, code, tc.module, tc.action, tc.code)
		}
	}
}

// FuzzPlainAPIPath: the fast path of parseAPIPath, when it answers,
// answers as the full parse does.
func FuzzPlainAPIPath(f *testing.F) {
	for _, s := range []string{"device/list", "users", "a/b/c", "a//b", "a/", "", "x.go", "a%2fb", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		module, action, ok := plainAPIPath(p)
		if !ok {
			return
		}
		m2, a2, e := unescapeAPIPath(p)
		if e != nil || m2 != module || a2 != action {
			t.Fatalf("%q: fast path %q %q, full parse %q %q %v", p, module, action, m2, a2, e)
		}
	})
}

// FuzzResolveAPI: whatever the request target, resolution never panics and
// never names a file outside the api directory.
func FuzzResolveAPI(f *testing.F) {
	for _, s := range []string{"/api/device/list", "/api/../../etc/passwd", "/api/%2e%2e/%2e%2e/x",
		"/api/a%2f..%2f..%2fb", "/api/a\\..\\b", "/api/x%00.go", "/api//x", "/api/a/./b", "/api/" + strings.Repeat("a/", 50) + "b"} {
		f.Add(s)
	}
	dir := filepath.Join(f.TempDir(), "api")
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		r := &http.Request{Method: "GET", URL: u}
		rt, e := resolveAPI(dir, r)
		if e != nil {
			if e.Status != 400 && e.Status != 404 {
				t.Fatalf("%q: status %d", target, e.Status)
			}
			return
		}
		if !within(dir, rt.file) || filepath.Clean(rt.file) != rt.file || !strings.HasSuffix(rt.file, ".go") {
			t.Fatalf("%q resolves to %q, outside %q", target, rt.file, dir)
		}
		if !validName(rt.action) {
			t.Fatalf("%q: action %q", target, rt.action)
		}
	})
}

// TestSymlinkOutOfAPI: a handler file that is a symlink to a file outside
// api/, or inside a symlinked directory pointing outside, is never run.
func TestSymlinkOutOfAPI(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	src := "package main\n\nvar secret = func() any { return \"leaked\" }\n"
	if err := os.WriteFile(filepath.Join(outside, "secret.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "api", "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "api", "in", "ok.go"), []byte("package main\n\nvar ok = func() any { return \"fine\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(root, "api", "secret.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "api", "out")); err != nil {
		t.Fatal(err)
	}
	// A symlink that stays inside api/ is fine.
	if err := os.Symlink(filepath.Join(root, "api", "in", "ok.go"), filepath.Join(root, "api", "ok.go")); err != nil {
		t.Fatal(err)
	}
	app := New(WithRoot(root), WithLogOutput(os.Stderr, 100))
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	for path, want := range map[string]int{"/api/secret": 404, "/api/out/secret": 404, "/api/in/ok": 200, "/api/ok": 200} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want || strings.Contains(rec.Body.String(), "leaked") {
			t.Errorf("%s: %d %s, want %d", path, rec.Code, rec.Body.String(), want)
		}
	}
}

// TestRouteCache: the cache answers a known path with the route resolved
// the first time, caches no error and no long path, stays within
// routeCacheSize entries, answers each path with its own route when
// paths share a slot, and is safe to use from many goroutines.
func TestRouteCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "api")
	var c routeCache
	get := func(target string) (apiRoute, *Error) {
		return c.resolve(dir, nil, httptest.NewRequest(http.MethodGet, target, nil))
	}
	size := func() int {
		n := 0
		for i := range c.slots {
			if c.slots[i].Load() != nil {
				n++
			}
		}
		return n
	}
	empty := func() {
		for i := range c.slots {
			c.slots[i].Store(nil)
		}
	}
	rt, e := get("/api/admin/users/delete")
	if e != nil || rt.module != "admin/users" || rt.action != "delete" ||
		rt.file != filepath.Join(dir, "admin", "users", "delete.go") {
		t.Fatalf("resolve: %+v, %v", rt, e)
	}
	if again, e := get("/api/admin/users/delete"); e != nil || !reflect.DeepEqual(again, rt) || size() != 1 {
		t.Fatalf("cached: %+v, %v, %d entries", again, e, size())
	}
	if _, e := get("/api/../x"); e == nil || size() != 1 {
		t.Fatalf("a bad path: %v, %d entries", e, size())
	}
	if _, e := get("/api/" + strings.Repeat("a", routeKeyMax)); e != nil || size() != 1 {
		t.Fatalf("a long path: %v, %d entries", e, size())
	}
	// A path and its escaped spellings resolve as uncached: the key of a
	// plain path (itself) is never that of an escaped one.
	for _, order := range [][]string{
		{"/api/x-y", "/api/x%2Dy", "/api/x%2525y", "/api/x%25y"},
		{"/api/a/b", "/api/a%2Fb", "/api/a%252Fb", "/api/a%2fb"},
	} {
		for range 2 {
			for _, target := range order {
				empty()
				want, we := resolveAPI(dir, httptest.NewRequest(http.MethodGet, target, nil))
				for _, other := range order {
					_, _ = get(other)
				}
				if got, e := get(target); !reflect.DeepEqual(got, want) || (e == nil) != (we == nil) {
					t.Errorf("%s after its spellings: %+v, %v; want %+v, %v", target, got, e, want, we)
				}
			}
		}
	}
	empty()
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range routeCacheSize {
				target := "/api/m" + strconv.Itoa(g) + "/a" + strconv.Itoa(i)
				if rt, e := get(target); e != nil || rt.action != "a"+strconv.Itoa(i) {
					t.Errorf("%s: %+v, %v", target, rt, e)
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	if n := size(); n < routeCacheSize/2 {
		t.Fatalf("%d entries after %d paths, want most of the %d slots used", n, 4*routeCacheSize, routeCacheSize)
	}
	for i := range c.slots {
		e := c.slots[i].Load()
		if e == nil {
			continue
		}
		if want, _ := resolveAPI(dir, httptest.NewRequest(http.MethodGet, e.key, nil)); !reflect.DeepEqual(e.rt, want) {
			t.Fatalf("slot %d: %+v for %s, want %+v", i, e.rt, e.key, want)
		}
		if again, _ := get(e.key); !reflect.DeepEqual(again, e.rt) {
			t.Fatalf("%s: %+v, want %+v", e.key, again, e.rt)
		}
	}
}
