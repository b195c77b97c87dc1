package host

import (
	"sync"
	"time"
)

// statCache remembers for a short while that a task file exists, so that
// dispatch does not stat the file for every task (an os.Stat took about
// a twentieth of the dispatching process's CPU at 7k tasks/s). A file
// found missing is checked again at every dispatch, so that a file just
// added is seen at once; a file removed may still be dispatched to for up
// to statTTL, and its task then fails to load on the worker
// (ErrTaskLoad) as a task of a file removed while queued does.
type statCache struct {
	stat func(path string) error
	mu   sync.Mutex
	seen map[string]time.Time // path: exists, checked until then
}

// statTTL is how long a task file found present is taken as present.
const statTTL = time.Second

// statCacheMax bounds the paths remembered; beyond it the cache starts
// over.
const statCacheMax = 4096

// newStatCache caches the positive answers of stat.
func newStatCache(stat func(path string) error) *statCache {
	return &statCache{stat: stat, seen: make(map[string]time.Time)}
}

// check returns nil when the file at path exists, as stat does.
func (c *statCache) check(path string) error {
	now := time.Now()
	c.mu.Lock()
	until, ok := c.seen[path]
	c.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	if err := c.stat(path); err != nil {
		c.mu.Lock()
		delete(c.seen, path)
		c.mu.Unlock()
		return err
	}
	c.mu.Lock()
	if len(c.seen) >= statCacheMax {
		clear(c.seen)
	}
	c.seen[path] = now.Add(statTTL)
	c.mu.Unlock()
	return nil
}
