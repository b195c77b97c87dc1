package jstask

import (
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// renewer renews the acknowledgement deadlines of a worker's running
// tasks: one goroutine and one ticker for all of them, every third of
// AckWait, rather than a goroutine and a ticker per task.
type renewer struct {
	every time.Duration
	log   func(err error)

	mu    sync.Mutex
	tasks map[jetstream.Msg]time.Time // renewed until then (zero: until removed)
	stop  chan struct{}
	done  chan struct{}
}

// newRenewer returns a renewer renewing every period; start starts it.
func newRenewer(every time.Duration, log func(err error)) *renewer {
	return &renewer{every: every, log: log, tasks: make(map[jetstream.Msg]time.Time)}
}

// start starts renewing until close.
func (r *renewer) start() {
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go r.loop()
}

// close stops the renewing and waits for it.
func (r *renewer) close() {
	close(r.stop)
	<-r.done
}

// keepAlive renews m's deadline until the returned stop is called, or
// until limit (if any) has passed.
func (r *renewer) keepAlive(m jetstream.Msg, limit time.Duration) (stop func()) {
	var until time.Time
	if limit > 0 {
		until = time.Now().Add(limit)
	}
	r.mu.Lock()
	r.tasks[m] = until
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.tasks, m)
		r.mu.Unlock()
	}
}

// loop renews, each period, the deadline of each task kept alive and
// not past its limit.
func (r *renewer) loop() {
	defer close(r.done)
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-tick.C:
			// Under the lock (a renewal is a buffered publish), so that
			// none comes after the task's stop returned.
			r.mu.Lock()
			for m, until := range r.tasks {
				if until.IsZero() || now.Before(until) {
					if err := m.InProgress(); err != nil {
						r.log(err)
					}
				}
			}
			r.mu.Unlock()
		}
	}
}
