package host_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
)

// counterFile is a handler whose interpreter counts its calls: a count of
// 1 after earlier calls shows that the file was unloaded and compiled again.
func counterFile(name string) string {
	return fmt.Sprintf(`//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var n int

var %s = func(api *host.API) any {
	n++
	return map[string]any{"n": n}
}
`, name)
}

// evictStep requests a file after waiting idle, and wants its count.
type evictStep struct {
	file string
	idle time.Duration
	want int
}

func TestEvictLoadedFiles(t *testing.T) {
	files := map[string]string{
		"api/a.go": counterFile("a"),
		"api/b.go": counterFile("b"),
		"api/c.go": counterFile("c"),
	}
	cases := []struct {
		name  string
		opts  []host.Option
		steps []evictStep
	}{
		{"unbounded keeps every file", nil, []evictStep{
			{"a", 0, 1}, {"b", 0, 1}, {"c", 0, 1}, {"a", 0, 2}, {"b", 0, 2}, {"c", 0, 2},
		}},
		{"cap unloads the least recently used", []host.Option{host.WithMaxLoadedFiles(2)}, []evictStep{
			// a, b, c: a goes. a again: b goes. c stays. b: a goes.
			{"a", 0, 1}, {"b", 0, 1}, {"c", 0, 1}, {"a", 0, 1}, {"c", 0, 2}, {"b", 0, 1}, {"c", 0, 3}, {"a", 0, 1},
		}},
		{"a recent request keeps a file under the cap", []host.Option{host.WithMaxLoadedFiles(2)}, []evictStep{
			{"a", 0, 1}, {"b", 0, 1}, {"a", 0, 2}, {"c", 0, 1}, {"a", 0, 3}, {"b", 0, 1},
		}},
		{"idle file is unloaded", []host.Option{host.WithUnloadIdle(time.Second)}, []evictStep{
			{"a", 0, 1}, {"a", 0, 2}, {"b", 0, 1}, {"a", 2500 * time.Millisecond, 1}, {"b", 0, 1}, {"a", 0, 2},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runEvictSteps(t, newTestApp(t, files, tc.opts...).srv.URL+"/api/", tc.steps)
		})
	}
}

// TestEvictPages: the bound on loaded files covers public/ pages too.
func TestEvictPages(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"public/a.go": counterFile("a"),
		"public/b.go": counterFile("b"),
		"public/c.go": counterFile("c"),
	}, host.WithMaxLoadedFiles(2))
	// a, b, c: a goes; c stays; a comes back compiled afresh.
	runEvictSteps(t, ta.srv.URL+"/", []evictStep{{"a", 0, 1}, {"b", 0, 1}, {"c", 0, 1}, {"c", 0, 2}, {"a", 0, 1}})
}

// runEvictSteps requests base+file for each step, after its idle wait,
// and wants its count.
func runEvictSteps(t *testing.T, base string, steps []evictStep) {
	t.Helper()
	for i, s := range steps {
		time.Sleep(s.idle)
		if got := evictCount(t, base+s.file); got != s.want {
			t.Fatalf("step %d (%s%s): count %d, want %d", i, base, s.file, got, s.want)
		}
	}
}

// TestEvictRecompilesChangedFile checks that a file unloaded by the cap and
// edited meanwhile comes back with its new content.
func TestEvictRecompilesChangedFile(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"api/a.go": counterFile("a"),
		"api/b.go": counterFile("b"),
	}, host.WithMaxLoadedFiles(1))
	if got := evictCount(t, ta.srv.URL+"/api/a"); got != 1 {
		t.Fatalf("first count %d", got)
	}
	evictCount(t, ta.srv.URL+"/api/b") // unloads a
	if err := os.WriteFile(filepath.Join(ta.root, "api", "a.go"), []byte(`//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var a = func(api *host.API) any { return map[string]any{"n": 42} }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := evictCount(t, ta.srv.URL+"/api/a"); got != 42 {
		t.Fatalf("after edit: count %d, want 42", got)
	}
}

func evictCount(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ N int }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return body.N
}
