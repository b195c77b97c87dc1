package interp

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/zealgo/zealgo/internal/testutil"
)

// TestRelayReadsWhileHandlerBlocks: the watcher's channels are read while
// the handler is blocked (fsnotify may wait, holding its lock, for its
// channels to be read), every event then reaches the handler in order, and
// the done channel closes once the watcher is closed.
func TestRelayReadsWhileHandlerBlocks(t *testing.T) {
	dir := t.TempDir()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	got := make(chan string, 100)
	var q *watchQueue
	done := relayTo(w, func(it watchItem) {
		<-release
		if it.err == nil && it.ev.Has(fsnotify.Create) {
			got <- filepath.Base(it.ev.Name)
		}
	}, &q)
	const files = 20
	for i := range files {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The handler is blocked on the first item; the rest are read anyway.
	if !testutil.Poll(10*time.Second, func() bool { return read(q) >= files }) {
		t.Fatalf("%d events read while the handler was blocked, want %d", read(q), files)
	}
	close(release)
	for i := range files {
		if name := <-got; name != strconv.Itoa(i) {
			t.Fatalf("event %d is for %s", i, name)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
}

// read counts the items read from the watcher.
func read(q *watchQueue) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.taken
}

// TestWatchQueueOverflow: past maxQueuedEvents the handler is told of an
// overflow after the queued items, and the end is seen.
func TestWatchQueueOverflow(t *testing.T) {
	q := &watchQueue{wake: make(chan struct{}, 1)}
	for i := range maxQueuedEvents + 10 {
		q.push(watchItem{ev: fsnotify.Event{Name: strconv.Itoa(i)}}, false)
	}
	q.push(watchItem{}, true)
	var n int
	var overflowAt = -1
	q.drain(func(it watchItem) {
		if errors.Is(it.err, fsnotify.ErrEventOverflow) {
			overflowAt = n
		}
		n++
	})
	if overflowAt != maxQueuedEvents || n != maxQueuedEvents+1 {
		t.Fatalf("overflow reported at %d of %d items, want at %d of %d", overflowAt, n, maxQueuedEvents, maxQueuedEvents+1)
	}
}
