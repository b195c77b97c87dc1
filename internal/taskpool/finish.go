package taskpool

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// finishQueue runs the finish callback one task at a time, in the order
// tasks finish, on a goroutine of its own.
type finishQueue struct {
	call    func(Outcome)
	log     *slog.Logger
	mu      sync.Mutex
	items   []Outcome
	running bool
}

func (q *finishQueue) push(o Outcome) {
	q.mu.Lock()
	q.items = append(q.items, o)
	if !q.running {
		q.running = true
		go q.drain()
	}
	q.mu.Unlock()
}

func (q *finishQueue) drain() {
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.items, q.running = nil, false
			q.mu.Unlock()
			return
		}
		o := q.items[0]
		q.items[0] = Outcome{}
		q.items = q.items[1:]
		q.mu.Unlock()
		q.run(o)
	}
}

// run calls the callback, which must not end the queue's goroutine.
func (q *finishQueue) run(o Outcome) {
	defer func() {
		if p := recover(); p != nil {
			q.log.Error("zealgo: task finish callback panicked", "id", o.ID, "task", o.Handler, "panic", fmt.Sprint(p))
		}
	}()
	q.call(o)
}

// wait returns when every queued callback has run, or when ctx is done.
func (q *finishQueue) wait(ctx context.Context) {
	for {
		q.mu.Lock()
		idle := !q.running && len(q.items) == 0
		q.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-ctx.Done():
			q.log.Warn("zealgo: task finish callbacks still running at shutdown")
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}
