package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestLogWatch: the watcher follows lines appended to serve's log, with
// the time of each line's time= field, and waitSwitch returns once a
// switch beyond the count it was given is logged; settles measures from
// the last save before each build's start.
func TestLogWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.log")
	if err := os.WriteFile(path, []byte("time=2026-01-01T00:00:00Z level=INFO msg=\"zealgo tier: build started\" gen=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := watchLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)
	s := &session{logs: w, saved: []time.Time{saved}}
	f.WriteString("time=2026-01-01T00:00:06.5Z level=INFO msg=\"zealgo tier: build started\" gen=2 changed=api/x.go\n")
	f.WriteString("time=2026-01-01T00:00:20Z level=INFO msg=\"zealgo tier: build ready: switching to it\" gen=2 took=13.5s changed=api/x.go\n")
	f.WriteString("time=2026-01-01T00:00:20.25Z level=INFO msg=\"zealgo tier: serving a native build: files unchanged since run compiled\" gen=2 files=5\n")
	at, ok := w.waitSwitch(0, 10*time.Second)
	if !ok || !at.Equal(time.Date(2026, 1, 1, 0, 0, 20, 250e6, time.UTC)) {
		t.Fatalf("waitSwitch: %v %v", at, ok)
	}
	if _, ok := w.waitSwitch(1, 50*time.Millisecond); ok {
		t.Error("waitSwitch(1) saw a second switch")
	}
	if st := s.settles(); len(st) != 1 || st[0] != 1500*time.Millisecond {
		t.Errorf("settles: %v, want [1.5s] (the build before the first save is not counted)", st)
	}
	if w.tooks[0] != "13.5s" {
		t.Errorf("tooks: %v", w.tooks)
	}
}

// TestTree: the tree of this process holds a child it started, counted
// as serving as its first argument is "serve", and the process's own RSS.
func TestTree(t *testing.T) {
	dir := t.TempDir() // sh serve: a child whose first argument is "serve", a script that waits
	if err := os.WriteFile(filepath.Join(dir, "serve"), []byte("sleep 60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "serve")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Skip("no sh:", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for end := time.Now().Add(10 * time.Second); ; { // until the child has exec'd sleep
		if p, ok := readProc(cmd.Process.Pid); ok && p.serving || time.Now().After(end) {
			break
		}
	}
	ps := tree(os.Getpid())
	if len(ps) < 2 || ps[0].pid != os.Getpid() || ps[0].rss == 0 {
		t.Fatalf("tree: %+v", ps)
	}
	found := false
	for _, p := range ps[1:] {
		if p.pid == cmd.Process.Pid {
			found = p.serving && p.ppid == os.Getpid()
		}
	}
	if !found {
		t.Errorf("the child %d is not in the tree as a serving process: %+v", cmd.Process.Pid, ps)
	}
	if treeCPU(ps) < ps[0].self {
		t.Errorf("treeCPU %d < the process's own %d", treeCPU(ps), ps[0].self)
	}
}

// TestSplit: the first save after each awaited switch is told apart from
// the others.
func TestSplit(t *testing.T) {
	ms := time.Millisecond
	s := &session{live: []time.Duration{1 * ms, 2 * ms, 3 * ms, 4 * ms, 5 * ms, 6 * ms}, waited: []int{2, 5}}
	after, others := s.split()
	if len(after) != 2 || after[0] != 3*ms || after[1] != 6*ms || len(others) != 4 {
		t.Errorf("split: after %v, others %v; want [3ms 6ms] and 4 others", after, others)
	}
}
