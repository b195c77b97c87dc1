package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// readUint reads one runtime metric.
func readUint(t *testing.T, name string) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("%s: kind %v", name, s[0].Value.Kind())
	}
	return s[0].Value.Uint64()
}

// collectUntil runs collections until ok holds (the floor adjusts on the
// finalizer goroutine, after a cycle), for at most 5 seconds.
func collectUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	if !testutil.Poll(5*time.Second, func() bool {
		if ok() {
			return true
		}
		runtime.GC()
		return false
	}) {
		t.Fatalf("%s: not reached (GOGC %d, goal %d MiB, live %d MiB)", what, currentPercent(),
			readUint(t, "/gc/heap/goal:bytes")>>20, readUint(t, "/gc/heap/live:bytes")>>20)
	}
}

// TestFloorFollowsLiveHeap: with a small live heap the goal is the floor;
// a live heap past half the floor gets GOGC back as it was; the floor
// comes back when the heap shrinks again; stop restores GOGC.
func TestFloorFollowsLiveHeap(t *testing.T) {
	const floor = 96 << 20
	base := currentPercent()
	if base != 100 {
		t.Skipf("GOGC is %d in this environment", base)
	}
	stop := Start(floor)
	collectUntil(t, "goal at the floor", func() bool {
		return readUint(t, "/gc/heap/goal:bytes") >= floor*9/10 && currentPercent() > 100
	})

	live := make([][]*int, 0, 1<<20) // about 64 MiB live, holding pointers
	for range 1 << 20 {
		live = append(live, make([]*int, 7))
	}
	collectUntil(t, "GOGC back to 100 with a large live heap", func() bool { return currentPercent() == 100 })
	runtime.KeepAlive(live)
	live = nil

	collectUntil(t, "the floor again once the heap shrank", func() bool { return currentPercent() > 100 })
	stop()
	if p := currentPercent(); p != 100 {
		t.Fatalf("after stop: GOGC %d, want 100", p)
	}
	runtime.GC()
	runtime.GC()
	if g := readUint(t, "/gc/heap/goal:bytes"); g >= floor/2 {
		t.Fatalf("after stop: goal %d MiB, want Go's own", g>>20)
	}
}

// TestFloorKeepsGOGCOff: with the collector off, Start sets nothing.
func TestFloorKeepsGOGCOff(t *testing.T) {
	prev := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(prev)
	stop := Start(64 << 20)
	defer stop()
	if p := currentPercent(); p != -1 {
		t.Fatalf("GOGC %d, want off", p)
	}
}

// TestStartReplaces: a second Start replaces the first; stopping the
// first then changes nothing, stopping the second restores GOGC.
func TestStartReplaces(t *testing.T) {
	prev := debug.SetGCPercent(150)
	defer debug.SetGCPercent(prev)
	stop1 := Start(128 << 20)
	stop2 := Start(256 << 20)
	stop1()
	collectUntil(t, "second floor in force", func() bool { return readUint(t, "/gc/heap/goal:bytes") >= 200<<20 })
	stop2()
	if p := currentPercent(); p != 150 {
		t.Fatalf("after both stops: GOGC %d, want 150", p)
	}
	if p := debug.SetGCPercent(150); p != 150 {
		t.Fatalf("GOGC %d", p)
	}
}

// TestZeroFloor: a floor of 0 sets nothing.
func TestZeroFloor(t *testing.T) {
	Start(0)()
	if p := currentPercent(); p != 100 {
		t.Fatalf("GOGC %d, want 100", p)
	}
}
