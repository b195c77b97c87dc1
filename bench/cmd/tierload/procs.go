package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proc is what /proc tells of one process.
type proc struct {
	pid, ppid   int
	self, child int64 // CPU ticks: utime+stime, cutime+cstime
	rss         int64 // bytes
	serving     bool  // a serving process: its first argument is "serve"
}

var pageSize = int64(os.Getpagesize())

// readProc reads /proc/pid/stat and cmdline; ok is false once it is gone.
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return proc{}, false
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3, the state
	if len(f) < 22 {
		return proc{}, false
	}
	n := func(field int) int64 { v, _ := strconv.ParseInt(f[field-3], 10, 64); return v }
	p := proc{pid: pid, ppid: int(n(4)), self: n(14) + n(15), child: n(16) + n(17), rss: n(24) * pageSize}
	if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
		args := strings.Split(string(cmd), "\x00")
		p.serving = len(args) > 1 && args[1] == "serve"
	}
	return p, true
}

// tree returns root and its descendants.
func tree(root int) []proc {
	all := map[int][]proc{}
	var rootProc proc
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		p, ok := readProc(pid)
		if !ok {
			continue
		}
		if pid == root {
			rootProc = p
		}
		all[p.ppid] = append(all[p.ppid], p)
	}
	if rootProc.pid == 0 {
		return nil
	}
	out := []proc{rootProc}
	for i := 0; i < len(out); i++ {
		out = append(out, all[out[i].pid]...)
	}
	return out
}

// treeCPU is the CPU ticks the tree of root has used: each live process's
// own, and what its reaped children used (counted once, by the parent that
// waited for them).
func treeCPU(ps []proc) int64 {
	var t int64
	for _, p := range ps {
		t += p.self + p.child
	}
	return t
}

// sampler watches the tree of serve's supervisor: the CPU of its serving
// processes (the rest of the tree's CPU is the supervisor's and the
// background builds'), the peak RSS of the serving processes together
// (old and new during a switch) and of the builds.
type sampler struct {
	root int
	stop chan struct{}
	done chan struct{}

	mu          sync.Mutex
	first, last map[int]int64 // serving pid -> CPU ticks when first and last seen
	rootSelf    [2]int64      // the supervisor's own CPU, first and last
	servingPeak int64         // bytes: supervisor + serving processes
	servingMax  int           // most serving processes seen at once
	oneServing  int64         // the largest total with one serving process
	buildPeak   int64         // bytes: the build's processes together
}

func newSampler(root int) *sampler {
	s := &sampler{root: root, stop: make(chan struct{}), done: make(chan struct{}),
		first: map[int]int64{}, last: map[int]int64{}}
	s.rootSelf[0] = -1
	go s.loop()
	return s
}

func (s *sampler) loop() {
	defer close(s.done)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		s.sample(tree(s.root))
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
	}
}

func (s *sampler) sample(ps []proc) {
	if len(ps) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	serving, build, n := ps[0].rss, int64(0), 0
	for _, p := range ps[1:] {
		if p.serving && p.ppid == s.root {
			if _, ok := s.first[p.pid]; !ok {
				s.first[p.pid] = p.self + p.child
			}
			s.last[p.pid] = p.self + p.child
			serving += p.rss
			n++
		} else {
			build += p.rss
		}
	}
	if s.rootSelf[0] < 0 {
		s.rootSelf[0] = ps[0].self
	}
	s.rootSelf[1] = ps[0].self
	s.servingPeak = max(s.servingPeak, serving)
	s.servingMax = max(s.servingMax, n)
	if n == 1 {
		s.oneServing = max(s.oneServing, serving)
	}
	s.buildPeak = max(s.buildPeak, build)
}

// finish stops the sampler and returns the CPU ticks of the serving
// processes and of the supervisor itself.
func (s *sampler) finish() (serving, supervisor int64) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid, t := range s.last {
		serving += t - s.first[pid]
	}
	return serving, s.rootSelf[1] - s.rootSelf[0]
}
