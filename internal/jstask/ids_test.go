package jstask

import (
	"testing"
	"time"
)

// TestIDReserveFollowsThePace: spare blocks are reserved for idAhead at
// the current pace, also in the first window: 10,240 ids handed out in
// the first 2 s (5,120 a second) want 75 blocks for the next 15 s, not
// the 10 used so far.
func TestIDReserveFollowsThePace(t *testing.T) {
	t.Parallel()
	r := &idReserve{winStart: time.Now().Add(-2 * time.Second), cur: 10 * idBlock}
	if got := r.want(); got < 70 || got > 80 {
		t.Errorf("want %d spare blocks after 10 blocks in 2s, want about 76", got)
	}
	// A full window behind and a quiet current one: the last window's pace.
	r = &idReserve{winStart: time.Now().Add(-time.Second), prev: 15 * idBlock}
	if got := r.want(); got < 13 || got > 16 {
		t.Errorf("want %d spare blocks after 15 blocks in the last 15s, want about 15", got)
	}
	if got := (&idReserve{}).want(); got != 1 {
		t.Errorf("want %d spare blocks with no ids handed out, want 1", got)
	}
}
