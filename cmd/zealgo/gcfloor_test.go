package main

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// gogcOf returns go_gc_gogc_percent from the metrics at addr, or -1.
func gogcOf(t *testing.T, addr string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_gc_gogc_percent "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return int(n)
			}
		}
	}
	return -1
}

// TestServeGCFloor: a served application's small heap is collected at the
// floor (GOGC raised to reach it), by default and as --gc-floor or its
// variable says; --gc-floor 0 leaves GOGC as the environment set it.
func TestServeGCFloor(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"public/index.html": "home"})
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		check func(p int) bool
	}{
		{"default", nil, nil, func(p int) bool { return p > 200 }},
		{"flag 0", nil, []string{"--gc-floor", "0"}, func(p int) bool { return p == 100 }},
		{"GOGC and flag 0", map[string]string{"GOGC": "50"}, []string{"--gc-floor", "0"}, func(p int) bool { return p == 50 }},
		{"variable 0", map[string]string{"ZEALGO_GC_FLOOR": "0"}, nil, func(p int) bool { return p == 100 }},
		{"flag 512M", nil, []string{"--gc-floor", "512M"}, func(p int) bool { return p > 2000 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			metrics := testutil.FreeAddr(t)
			cmd, _, logs := serve(t, root, append([]string{"--metrics-addr", metrics, "--data", t.TempDir()}, tc.args...)...)
			var p int
			testutil.WaitFor(t, 10*time.Second, "GOGC as wanted", func() bool {
				p = gogcOf(t, metrics)
				return tc.check(p)
			})
			cmd.Process.Signal(syscall.SIGTERM)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("exit: %v (GOGC %d)\n%s", err, p, logs)
			}
		})
	}
}
