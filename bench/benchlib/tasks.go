package benchlib

import (
	"sync"
	"time"
)

// Tasks lets a benchmark handler wait for the tasks it dispatched: the
// application's OnTaskFinish callback calls Finish, and the handler, given
// Tasks by injection, calls Wait.
type Tasks struct {
	mu   sync.Mutex
	done map[int64]chan any
}

// NewTasks returns an empty Tasks.
func NewTasks() *Tasks { return &Tasks{done: map[int64]chan any{}} }

func (t *Tasks) ch(id int64) chan any {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.done[id]
	if c == nil {
		c = make(chan any, 1)
		t.done[id] = c
	}
	return c
}

// Finish records the end of task id with its result, or its error.
func (t *Tasks) Finish(id int64, result any, err error) {
	if err != nil {
		result = "error: " + err.Error()
	}
	select {
	case t.ch(id) <- result:
	default: // handed over twice (at least once on NATS): the first counts
	}
}

// Wait returns the result of task id once it has finished, and false if
// it has not within the timeout in milliseconds.
func (t *Tasks) Wait(id int64, timeoutMs int) (any, bool) {
	c := t.ch(id)
	defer func() {
		t.mu.Lock()
		delete(t.done, id)
		t.mu.Unlock()
	}()
	select {
	case v := <-c:
		return v, true
	case <-time.After(time.Duration(timeoutMs) * time.Millisecond):
		return nil, false
	}
}
