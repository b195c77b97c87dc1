// Package benchutil holds what the benchmark drivers share: free ports,
// starting and stopping a server process, waiting for it, and percentiles.
package benchutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FreeAddr returns a loopback address with a port that was free a moment ago.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("benchutil: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Server is a server process started by Start.
type Server struct {
	Cmd  *exec.Cmd
	Addr string
	// Ready is how long the process took from exec to its first answer.
	Ready time.Duration
}

// Start runs bin with args (the text {addr} replaced by a free loopback
// address) and env added, and waits until it answers HTTP at probe.
func Start(bin string, args, env []string, probe string, within time.Duration) (*Server, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "{addr}", addr)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if os.Getenv("BENCH_SERVER_LOG") == "" {
		cmd.Stdout, cmd.Stderr = nil, nil
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("benchutil: start %s: %w", bin, err)
	}
	s := &Server{Cmd: cmd, Addr: addr}
	c := &http.Client{Timeout: time.Second}
	for time.Since(t0) < within {
		resp, err := c.Get("http://" + addr + probe)
		if err == nil {
			resp.Body.Close()
			s.Ready = time.Since(t0)
			return s, nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("benchutil: %s did not answer within %s", bin, within)
}

// URL returns the server's URL for path.
func (s *Server) URL(path string) string { return "http://" + s.Addr + path }

// RSS returns the resident memory of the process in bytes.
func (s *Server) RSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.Cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("benchutil: rss: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("benchutil: no VmRSS")
}

// Stop ends the process by its PID (SIGTERM, then SIGKILL after 5s) and
// waits for it.
func (s *Server) Stop() {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.Cmd.Process.Kill()
		<-done
	}
}

// Percentile returns the p-th percentile (0..100) of ds, nearest rank.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p/100*float64(len(s))+0.999999) - 1
	i = max(0, min(i, len(s)-1))
	return s[i]
}

// Ms formats d in milliseconds with two decimals.
func Ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// MiB formats n bytes in MiB with one decimal.
func MiB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// MemProbe is a handler file, api/bench/mem.go, that answers the server's
// Go heap in use after a collection: Server.Heap reads it.
const MemProbe = `//go:build ignore

package main

import (
	"runtime"
	"runtime/debug"

	"github.com/zealgo/zealgo/host"
)

var mem = func(api *host.API) any {
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return map[string]any{"heap_inuse": m.HeapInuse}
}
`

// Heap returns the server's Go heap in use, after a collection, from its
// MemProbe at /api/bench/mem.
func (s *Server) Heap() (int64, error) {
	resp, err := http.Get(s.URL("/api/bench/mem"))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var m struct {
		HeapInuse int64 `json:"heap_inuse"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return 0, fmt.Errorf("benchutil: memory probe: %w", err)
	}
	return m.HeapInuse, nil
}

// editFile is the handler file the reload and tier benchmarks rewrite:
// it answers its version v and a padding that changes with it.
const editFile = `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

// edit is rewritten by the benchmark: v is the save number.
var edit = func(api *host.API) any {
	return map[string]any{"v": %d, "pad": "%s"}
}
`

// WriteEdit rewrites the handler file at path in place (truncate and
// write, as an editor's save does) so that it answers version v.
func WriteEdit(path string, v int) error {
	return os.WriteFile(path, []byte(fmt.Sprintf(editFile, v, fmt.Sprint(v*7919))), 0o644)
}
