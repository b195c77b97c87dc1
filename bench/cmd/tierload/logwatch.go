package main

import (
	"bufio"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// logWatch follows serve's log file and keeps the times of the lines that
// mark a background build's start and a switch to a native build.
type logWatch struct {
	path string
	stop chan struct{}

	mu       sync.Mutex
	cond     *sync.Cond
	starts   []time.Time // "zealgo tier: build started"
	switches []time.Time // "zealgo tier: serving a native build"
	tooks    []string    // the took= of "build ready"
	failed   int         // "zealgo tier: build failed"
}

// watchLog follows path from its current end.
func watchLog(path string) (*logWatch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return nil, err
	}
	w := &logWatch{path: path, stop: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.follow(f)
	return w, nil
}

func (w *logWatch) follow(f *os.File) {
	defer f.Close()
	r := bufio.NewReader(f)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var partial string
	for {
		line, err := r.ReadString('\n')
		partial += line
		if err == nil {
			w.take(partial)
			partial = ""
			continue
		}
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
	}
}

// take records a line, with the time of the log line (its time= field)
// or, without one, the time it was read.
func (w *logWatch) take(line string) {
	at := time.Now()
	if rest, ok := strings.CutPrefix(line, "time="); ok {
		if t, err := time.Parse(time.RFC3339Nano, strings.Fields(rest)[0]); err == nil {
			at = t
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case strings.Contains(line, "zealgo tier: build started"):
		w.starts = append(w.starts, at)
	case strings.Contains(line, "zealgo tier: serving a native build"):
		w.switches = append(w.switches, at)
	case strings.Contains(line, "zealgo tier: build failed"):
		w.failed++
	case strings.Contains(line, "zealgo tier: build ready"):
		if i := strings.Index(line, "took="); i >= 0 {
			w.tooks = append(w.tooks, strings.Fields(line[i+5:])[0])
		}
	}
	w.cond.Broadcast()
}

// switchCount returns how many switches the log has shown.
func (w *logWatch) switchCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.switches)
}

// waitSwitch waits until the log has shown more than n switches, or a
// build failed, or within has passed; it returns the time of switch n+1.
func (w *logWatch) waitSwitch(n int, within time.Duration) (time.Time, bool) {
	deadline := time.AfterFunc(within, func() { w.mu.Lock(); w.cond.Broadcast(); w.mu.Unlock() })
	defer deadline.Stop()
	end := time.Now().Add(within)
	w.mu.Lock()
	defer w.mu.Unlock()
	failed := w.failed
	for len(w.switches) <= n && w.failed == failed && time.Now().Before(end) {
		w.cond.Wait()
	}
	if len(w.switches) <= n {
		return time.Time{}, false
	}
	return w.switches[n], true
}

func (w *logWatch) close() { close(w.stop) }
