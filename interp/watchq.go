package interp

import (
	"sync"

	"github.com/fsnotify/fsnotify"
)

// maxQueuedEvents bounds the events relay holds for a slow handler; past
// it they are dropped and the handler told of an overflow, as the kernel
// does when its own queue is full.
const maxQueuedEvents = 4096

// watchItem is one thing a watcher reported: an event or an error.
type watchItem struct {
	ev  fsnotify.Event
	err error
}

// relay hands what w reports to handle, in order, and returns a channel
// closed once w is closed and handle has seen everything. The watcher's
// channels are read on a goroutine of their own that takes no other lock:
// fsnotify may hold its internal lock while it waits for its Errors
// channel to be read (a watched directory renamed away), and Add and
// Remove wait for that lock, so a handler that calls them or takes a lock
// whose holder does would otherwise hang the watcher for good.
func relay(w *fsnotify.Watcher, handle func(watchItem)) <-chan struct{} {
	return relayTo(w, handle, nil)
}

// relayTo is relay, with its queue stored in *qp when qp is not nil.
func relayTo(w *fsnotify.Watcher, handle func(watchItem), qp **watchQueue) <-chan struct{} {
	q := &watchQueue{wake: make(chan struct{}, 1)}
	if qp != nil {
		*qp = q
	}
	done := make(chan struct{})
	go q.read(w)
	go func() {
		defer close(done)
		q.drain(handle)
	}()
	return done
}

// watchQueue holds what the watcher reported until the handler takes it.
type watchQueue struct {
	mu       sync.Mutex
	items    []watchItem
	taken    int  // items read from the watcher in all, dropped ones too
	overflow bool // items were dropped since the handler last took them
	ended    bool // the watcher is closed
	wake     chan struct{}
}

// read takes the watcher's events and errors until it is closed.
func (q *watchQueue) read(w *fsnotify.Watcher) {
	for {
		var it watchItem
		var ok bool
		select {
		case it.ev, ok = <-w.Events:
		case it.err, ok = <-w.Errors:
		}
		q.push(it, !ok)
		if !ok {
			return
		}
	}
}

// push queues it, or marks the end.
func (q *watchQueue) push(it watchItem, end bool) {
	q.mu.Lock()
	if !end {
		q.taken++
	}
	switch {
	case end:
		q.ended = true
	case len(q.items) >= maxQueuedEvents:
		q.overflow = true
	default:
		q.items = append(q.items, it)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// drain gives the queued items to handle until the end is marked.
func (q *watchQueue) drain(handle func(watchItem)) {
	for range q.wake {
		for {
			q.mu.Lock()
			items, overflow, ended := q.items, q.overflow, q.ended
			q.items, q.overflow = nil, false
			q.mu.Unlock()
			for _, it := range items {
				handle(it)
			}
			if overflow { // the dropped items came after the queued ones
				handle(watchItem{err: fsnotify.ErrEventOverflow})
			}
			if len(items) == 0 && !overflow {
				if ended {
					return
				}
				break
			}
		}
	}
}
