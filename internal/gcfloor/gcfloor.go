// Package gcfloor keeps the garbage collector's heap goal of the process at
// or above a floor, so that a server whose live heap is small does not
// collect after every few megabytes it allocates.
//
// Go's collector starts a cycle when the heap has grown by GOGC percent of
// the live heap (and of the stacks and globals it scans), with a minimum
// goal of 4 MiB. A server that keeps 2 MiB live therefore collects every
// 2 MiB of allocation, and marks those 2 MiB each time: at tens of
// thousands of requests a second, that is several percent of its CPU.
// There is no setting for the minimum goal, so after each cycle the floor
// sets GOGC to what makes the next goal the floor: a heap that is small
// stays below it and is collected less often; a live heap of half the
// floor or more gets GOGC as the environment set it (100 by default),
// and the floor changes nothing. The collector's memory limit (GOMEMLIMIT)
// still applies on top.
package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// maxPercent bounds the GOGC the floor sets, so that a live heap that is
// tiny (a test process) does not get an absurd one.
const maxPercent = 10000

// The runtime metrics the floor reads after each cycle.
var sampleNames = [...]string{
	"/gc/heap/live:bytes",
	"/gc/scan/stack:bytes",
	"/gc/scan/globals:bytes",
	"/gc/gogc:percent",
}

// active is the floor in force: the process has one GOGC, so a new Start
// replaces the floor of the previous one.
var (
	mu     sync.Mutex
	active *floor
)

// floor is one Start's floor, checked after every collection.
type floor struct {
	bytes   uint64
	base    int // GOGC before Start: the floor never sets less
	stopped atomic.Bool
	samples [len(sampleNames)]metrics.Sample
}

// Start keeps the heap goal at least bytes until stop is called, which
// restores GOGC as it was. A floor of 0 or less, or GOGC=off, sets nothing.
func Start(bytes int64) (stop func()) {
	mu.Lock()
	defer mu.Unlock()
	base := currentPercent()
	if prev := active; prev != nil {
		prev.stopped.Store(true)
		base = prev.base
		debug.SetGCPercent(base)
		active = nil
	}
	if bytes <= 0 || base <= 0 {
		return func() {}
	}
	f := &floor{bytes: uint64(bytes), base: base}
	for i, name := range sampleNames {
		f.samples[i].Name = name
	}
	active = f
	f.adjust()
	f.arm()
	return f.stop
}

// stop ends the floor and restores GOGC, unless a later Start replaced it.
func (f *floor) stop() {
	mu.Lock()
	defer mu.Unlock()
	if f.stopped.Swap(true) || active != f {
		return
	}
	active = nil
	debug.SetGCPercent(f.base)
}

// sentinel is garbage from birth: its finalizer runs after the next
// collection, adjusts the floor and arms the next sentinel. It holds a
// pointer, so that it is not batched with other tiny objects.
type sentinel struct{ f *floor }

func (f *floor) arm() {
	runtime.SetFinalizer(&sentinel{f: f}, collected)
}

// collected runs after each collection, on the finalizer goroutine.
func collected(s *sentinel) {
	mu.Lock()
	defer mu.Unlock()
	if s.f.stopped.Load() || active != s.f {
		return
	}
	s.f.adjust()
	s.f.arm()
}

// adjust sets GOGC so that the next goal, live + (live + stacks +
// globals) * GOGC/100, is the floor; never below the base. Called with mu
// held.
func (f *floor) adjust() {
	metrics.Read(f.samples[:])
	live := f.samples[0].Value.Uint64()
	scanned := live + f.samples[1].Value.Uint64() + f.samples[2].Value.Uint64()
	want := f.base
	if live < f.bytes && scanned > 0 {
		p := (f.bytes - live) * 100 / scanned
		want = int(min(p, uint64(maxPercent)))
	}
	want = max(want, f.base)
	// Leave GOGC alone for a change under 5%: setting it takes the heap lock.
	cur := percentOf(f.samples[3])
	if math.Abs(float64(want-cur)) <= float64(cur)/20 {
		return
	}
	debug.SetGCPercent(want)
}

// currentPercent returns GOGC as it is now; -1 when the collector is off.
func currentPercent() int {
	s := []metrics.Sample{{Name: sampleNames[3]}}
	metrics.Read(s)
	return percentOf(s[0])
}

// percentOf reads a /gc/gogc:percent sample; -1 (off) reads as a huge
// unsigned number.
func percentOf(s metrics.Sample) int {
	if s.Value.Kind() != metrics.KindUint64 || s.Value.Uint64() > math.MaxInt32 {
		return -1
	}
	return int(s.Value.Uint64())
}
