package host_test

import (
	"encoding/json"
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

	"github.com/zealgo/zealgo/internal/testutil"
)

// mixHandler and mixLib carry a version marker each: the handler answers
// both, so an answer tells which side of a swap each was compiled from.
const (
	mixHandler = `//go:build ignore

package main

import (
	"example.com/blog/lib/mark"
	"github.com/zealgo/zealgo/host"
)

var mix = func(api *host.API) any { return map[string]any{"handler": %d, "lib": mark.V} }
`
	mixLib = "// Package mark carries the lib's version.\npackage mark\n\n// V is the version.\nconst V = %d\n"
)

// TestReloadBatchNeverMixes: a checkout that changes a handler and the
// application package it imports, writing other files between the two
// (5 ms, a quarter of the window), 10 times while four clients ask for the handler: no answer
// comes from a handler of one side with the package of the other; the
// two are taken as one batch (issue 30, item 4).
func TestReloadBatchNeverMixes(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"go.mod":           "module example.com/blog\n\ngo 1.22\n",
		"lib/mark/mark.go": fmt.Sprintf(mixLib, 0),
		"api/mix.go":       fmt.Sprintf(mixHandler, 0),
	})
	url := ta.srv.URL + "/api/mix"
	if code, body := get(t, url); code != 200 || body != `{"handler":0,"lib":0}` {
		t.Fatalf("before the swaps: %d %s", code, body)
	}
	var stop atomic.Bool
	var served atomic.Int64
	var mixes sync.Map // "handler lib" -> how many answers
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				resp, err := http.Get(url)
				if err != nil {
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var v struct{ Handler, Lib int }
				if resp.StatusCode != 200 || json.Unmarshal(b, &v) != nil {
					continue
				}
				served.Add(1)
				if v.Handler != v.Lib {
					n, _ := mixes.LoadOrStore([2]int{v.Handler, v.Lib}, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				}
			}
		})
	}
	handler, lib := filepath.Join(ta.root, "api/mix.go"), filepath.Join(ta.root, "lib/mark/mark.go")
	// gaps[v] is how long the checkout of version v took between its two
	// writes: on a loaded machine the 5 ms may pass the window
	// (Config.ReloadDebounce's default), and then the two are rightly two
	// batches.
	const window = 20 * time.Millisecond
	gaps := map[int]time.Duration{}
	for v := 1; v <= 10; v++ {
		if err := os.WriteFile(handler, []byte(fmt.Sprintf(mixHandler, v)), 0o644); err != nil {
			t.Fatal(err)
		}
		wrote := time.Now()
		time.Sleep(5 * time.Millisecond) // the checkout writes other files meanwhile
		gaps[v] = time.Since(wrote)
		if err := os.WriteFile(lib, []byte(fmt.Sprintf(mixLib, v)), 0o644); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"handler":%d,"lib":%d}`, v, v)
		testutil.WaitFor(t, 5*time.Second, want, func() bool { _, b := get(t, url); return b == want })
	}
	stop.Store(true)
	wg.Wait()
	var bad []string
	within := 0
	for _, gap := range gaps {
		if gap < window {
			within++
		}
	}
	mixes.Range(func(k, n any) bool {
		hl := k.([2]int)
		if gap, ok := gaps[hl[0]]; ok && hl[1] == hl[0]-1 && gap >= window {
			t.Logf("swap %d: %d answers of the handler alone, its two writes %v apart", hl[0], n.(*atomic.Int64).Load(), gap)
			return true
		}
		bad = append(bad, fmt.Sprintf("%d answers with handler %d and lib %d", n.(*atomic.Int64).Load(), hl[0], hl[1]))
		return true
	})
	if len(bad) > 0 {
		t.Fatalf("of %d answers, some mixed the handler of one side with the package of the other: %s", served.Load(), strings.Join(bad, "; "))
	}
	t.Logf("%d answers, none mixed; %d of 10 checkouts wrote both files within the window", served.Load(), within)
}
