// Package deadline enforces the read and write deadlines of a listener's
// TCP connections with one coarse clock, so that a server that sets
// deadlines on every request (net/http's ReadHeaderTimeout, WriteTimeout
// and IdleTimeout set four or five per request on a kept-alive
// connection) does not pay for a clock read and a runtime timer change
// each time.
//
// A deadline at least Options.Precise ahead is only recorded: a watcher
// goroutine, ticking every Options.Tick while connections are open,
// finds it passed and sets it on the connection then, which ends a
// blocked Read or Write with os.ErrDeadlineExceeded, as the deadline
// itself would have. Such a deadline therefore takes effect never before
// it passes and at most one tick after. A nearer deadline (a test's, a
// handler's short one), a past one (net/http's way of waking a pending
// read) and a cleared one go to the connection at once, exactly as
// without this package.
//
// The watchers' readings make a clock shared by the process (Now): code
// that needs the time of a request only to a tick, while connections are
// open, reads it with an atomic load instead of the system clock.
//
// Only *net.TCPConn connections are wrapped; the wrapper embeds it, so
// that sendfile (ReadFrom), CloseWrite and the other methods of the
// connection are still there. NetConn returns the connection itself.
package deadline

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// The defaults of Options.
const (
	DefaultTick    = 100 * time.Millisecond
	DefaultPrecise = time.Second
)

// The shared clock: the watchers' readings of the monotonic clock.
var (
	base    = time.Now()
	clock   sharedClock  // since base, at the latest tick of any watcher
	running atomic.Int32 // watchers running
)

// Base returns the origin of Now.
func Base() time.Time { return base }

// Now returns the shared clock, read by an atomic load: the time since
// Base at the latest tick of a running watcher (at most its Tick ago),
// and whether one runs. With none, the clock stands still.
func Now() (time.Duration, bool) {
	return time.Duration(clock.Load()), running.Load() > 0
}

// Stale returns how much longer than DefaultTick the shared clock stood
// at the reading r, if it is one of the latest that did (a watcher's
// goroutine that ran late: a starved CPU, a long pause), and 0 otherwise.
// A time taken as r + DefaultTick, which is no earlier than the moment
// it stands for while the watchers tick on time, may then be that much
// earlier: a limit counted from it that must not pass early adds it.
func Stale(r time.Duration) time.Duration {
	return time.Duration(clock.stale.find(int64(r)))
}

// sharedClock is the latest reading of the watchers, with the latest
// readings that stood longer than DefaultTick: few, since the watchers
// mostly tick on time; only a limit about to pass looks one up.
type sharedClock struct {
	atomic.Int64
	stale staleLog
}

// advance moves the clock to now, unless another watcher moved it
// further, and records the reading it replaces if that stood for more
// than DefaultTick.
func (c *sharedClock) advance(now int64) {
	for {
		old := c.Load()
		if now <= old {
			return
		}
		if c.CompareAndSwap(old, now) {
			if by := now - old - int64(DefaultTick); by > 0 {
				c.stale.record(old, by)
			}
			return
		}
	}
}

// staleLog is a ring of the latest stale readings.
type staleLog struct {
	mu   sync.Mutex
	at   [64]int64 // the readings
	by   [64]int64 // how long past DefaultTick each stood
	next int       // the slot the next record takes
}

// record notes that the reading at stood by past DefaultTick.
func (l *staleLog) record(at, by int64) {
	l.mu.Lock()
	l.at[l.next], l.by[l.next] = at, by
	l.next = (l.next + 1) % len(l.at)
	l.mu.Unlock()
}

// find returns how long past DefaultTick the reading at stood, if
// recorded, and 0 otherwise.
func (l *staleLog) find(at int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, a := range l.at {
		if a == at && l.by[i] > 0 {
			return l.by[i]
		}
	}
	return 0
}

// Options tune a listener's deadlines; the zero value is the default.
type Options struct {
	// Tick is how often the watcher looks for deadlines that have passed:
	// how late at most a coarse deadline takes effect. Default
	// DefaultTick.
	Tick time.Duration
	// Precise: a deadline nearer than this is set on the connection at
	// once. Default DefaultPrecise; a negative value records every future
	// deadline.
	Precise time.Duration
}

// Listen returns ln whose TCP connections have coarse deadlines.
func Listen(ln net.Listener, o Options) net.Listener {
	if o.Tick <= 0 {
		o.Tick = DefaultTick
	}
	if o.Precise == 0 {
		o.Precise = DefaultPrecise
	}
	return &listener{Listener: ln, w: &watcher{tick: o.Tick, precise: max(o.Precise, 0)}}
}

// listener wraps the connections its Listener accepts.
type listener struct {
	net.Listener
	w *watcher
}

// Accept returns the next connection, wrapped if it is a TCP connection.
func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	dc := &Conn{TCPConn: tc, w: l.w}
	l.w.add(dc)
	return dc, nil
}

// Conn is a TCP connection whose far deadlines the watcher enforces.
type Conn struct {
	*net.TCPConn
	w   *watcher
	idx int // in w.conns; guarded by w.mu

	// mu serializes what sets a deadline on the connection itself (a near
	// one, lifting one, the watcher's expiry) and Close; recording a far
	// deadline takes no lock.
	mu          sync.Mutex
	read, write side
	closed      atomic.Bool // written under mu
}

// side is the read or the write deadline of a Conn.
type side struct {
	// at is the recorded deadline (since Base), 0 if none.
	at atomic.Int64
	// applied: the connection itself has a deadline set (a near one, or
	// one the watcher expired). Written under Conn.mu; while it is false,
	// a far deadline or none is only recorded.
	applied atomic.Bool
}

// NetConn returns the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.TCPConn }

// apply sets t as the deadline of side s on the connection itself.
func (c *Conn) apply(s *side, t time.Time) error {
	if s == &c.read {
		return c.TCPConn.SetReadDeadline(t)
	}
	return c.TCPConn.SetWriteDeadline(t)
}

// SetDeadline sets the read and the write deadline.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the read deadline (net.Conn).
func (c *Conn) SetReadDeadline(t time.Time) error { return c.set(&c.read, t) }

// SetWriteDeadline sets the write deadline (net.Conn).
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.set(&c.write, t) }

// set records t on s when it is far enough ahead (or zero), else sets it
// on the connection. A recorded deadline takes one atomic store, unless
// the connection has one of its own to lift (lift). It takes no defer:
// net/http calls it several times per request.
func (c *Conn) set(s *side, t time.Time) error {
	var at int64 // since Base; monotonic when t has it; 0: none
	if !t.IsZero() {
		// t.Sub saturates, so at may be MinInt64: the test adds to the
		// clock rather than subtract from at, which could overflow.
		at = int64(t.Sub(base))
		if at < clock.Load()+int64(c.w.precise) {
			return c.setNear(s, t)
		}
	}
	s.at.Store(at)
	if !s.applied.Load() && !c.closed.Load() {
		return nil
	}
	return c.lift(s, at, t)
}

// setNear sets a near or past deadline on the connection.
func (c *Conn) setNear(s *side, t time.Time) error {
	c.mu.Lock()
	if !c.closed.Load() {
		s.applied.Store(true) // before at: a far set meanwhile then lifts t
		s.at.Store(0)
	}
	err := c.apply(s, t)
	c.mu.Unlock()
	return err
}

// lift records at (t: a far deadline or none) and lifts the deadline set
// on the connection itself.
func (c *Conn) lift(s *side, at int64, t time.Time) error {
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return c.apply(s, t) // the closed connection's error
	}
	s.at.Store(at) // again: the watcher may have taken it meanwhile
	var err error
	if s.applied.Load() {
		s.applied.Store(false)
		err = c.apply(s, time.Time{})
	}
	c.mu.Unlock()
	return err
}

// due reports whether a recorded deadline has passed at now.
func (c *Conn) due(now int64) bool {
	r, w := c.read.at.Load(), c.write.at.Load()
	return r != 0 && r <= now || w != 0 && w <= now
}

// expire sets the recorded deadlines that have passed at now on the
// connection, which ends what blocks on them. A deadline recorded
// meanwhile wins: the watcher marks the side applied before it takes the
// deadline, so that a set that stores a new one after that lifts what it
// applies.
func (c *Conn) expire(now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return
	}
	for _, s := range [...]*side{&c.read, &c.write} {
		at := s.at.Load()
		if at == 0 || at > now {
			continue
		}
		was := s.applied.Swap(true)
		if !s.at.CompareAndSwap(at, 0) {
			s.applied.Store(was) // replaced: not due any more
			continue
		}
		_ = c.apply(s, base.Add(time.Duration(at)))
	}
}

// Close closes the connection and stops watching it.
func (c *Conn) Close() error {
	c.mu.Lock()
	closed := c.closed.Swap(true)
	c.mu.Unlock()
	if !closed {
		c.w.remove(c)
	}
	return c.TCPConn.Close()
}

// watcher enforces the recorded deadlines of a listener's open
// connections. Its goroutine runs while there are some.
type watcher struct {
	tick    time.Duration
	precise time.Duration

	mu      sync.Mutex
	conns   []*Conn
	running bool
	due     []*Conn // scratch of run
}

// add watches c, starting the goroutine if it is not running.
func (w *watcher) add(c *Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c.idx = len(w.conns)
	w.conns = append(w.conns, c)
	if !w.running {
		w.running = true
		clock.advance(int64(time.Since(base)))
		running.Add(1)
		go w.run()
	}
}

// remove stops watching c.
func (w *watcher) remove(c *Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	last := len(w.conns) - 1
	w.conns[c.idx] = w.conns[last]
	w.conns[c.idx].idx = c.idx
	w.conns[last] = nil
	w.conns = w.conns[:last]
}

// run ticks until no connection is left, expiring the deadlines that
// have passed.
func (w *watcher) run() {
	t := time.NewTicker(w.tick)
	defer t.Stop()
	for range t.C {
		now := int64(time.Since(base))
		clock.advance(now)
		due, more := w.collect(now)
		for i, c := range due {
			c.expire(now)
			due[i] = nil
		}
		if !more {
			return
		}
	}
}

// collect returns the connections with a deadline passed at now, and
// whether any connection is left; with none, the goroutine ends.
func (w *watcher) collect(now int64) ([]*Conn, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.conns) == 0 {
		w.running = false
		running.Add(-1)
		return nil, false
	}
	w.due = w.due[:0]
	for _, c := range w.conns {
		if c.due(now) {
			w.due = append(w.due, c)
		}
	}
	return w.due, true
}
