package host

import "testing"

// TestTierGCFloor: the GC floor of a native build's process grows with
// the heap its warmed interpreter keeps, up to tierFloorMax times the
// configured one; a floor of 0 (Go's own policy), or nothing measured,
// leaves it as it is.
func TestTierGCFloor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		floor         int64
		before, after uint64
		want          int64
	}{
		{32 * mib, 3 * mib, 9 * mib, 96 * mib},
		{32 * mib, 4 * mib, 5 * mib, 40 * mib},
		{32 * mib, 1 * mib, 9 * mib, tierFloorMax * 32 * mib},
		{32 * mib, 3 * mib, 3 * mib, 32 * mib},
		{32 * mib, 0, 9 * mib, 32 * mib},
		{0, 3 * mib, 9 * mib, 0},
	} {
		if got := tierGCFloor(tc.floor, tc.before, tc.after); got != tc.want {
			t.Errorf("tierGCFloor(%d, %d, %d) = %d, want %d", tc.floor, tc.before, tc.after, got, tc.want)
		}
	}
}
