package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/zealgo/zealgo/bench/internal/benchutil"
)

// clkTck is the kernel's clock ticks per second of /proc's CPU times
// (USER_HZ, 100 on Linux).
const clkTck = 100

func (s *session) report(elapsed time.Duration, total, failed int64, first string, clients int) {
	fmt.Println("| saves | switches to a new build | save to new body served, p50 | p99 | max | requests under load | failed requests |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Printf("| %d | %d | %s | %s | %s | %d (%.0f/s, %d clients) | %d |\n", len(s.live), len(s.waited),
		benchutil.Ms(benchutil.Percentile(s.live, 50)), benchutil.Ms(benchutil.Percentile(s.live, 99)),
		benchutil.Ms(benchutil.Percentile(s.live, 100)), total, float64(total)/elapsed.Seconds(), clients, failed)
	after, others := s.split()
	fmt.Printf("\nOf these, the first save after each switch (the new serving process's first reload of the file): %d, p50 %s, max %s;"+
		" the other saves: %d, p50 %s, p99 %s, max %s.\n", len(after), benchutil.Ms(benchutil.Percentile(after, 50)),
		benchutil.Ms(benchutil.Percentile(after, 100)), len(others), benchutil.Ms(benchutil.Percentile(others, 50)),
		benchutil.Ms(benchutil.Percentile(others, 99)), benchutil.Ms(benchutil.Percentile(others, 100)))
	if first != "" {
		fmt.Printf("\nFirst failure: %s\n", first)
	}
	fmt.Printf("\nThe session took %s.", elapsed.Round(time.Second))
	if s.stopped != "" {
		fmt.Printf(" **It ended early: %s** (%d of %d saves, %d of %d switches).", s.stopped, len(s.live), s.saves, len(s.waited), s.switches)
	}
	fmt.Print("\n\n")
}

// split returns the times of the saves that came first after a switch
// (those after a save whose switch was waited for) and of the others.
func (s *session) split() (after, others []time.Duration) {
	first := map[int]bool{}
	for _, v := range s.waited {
		first[v+1] = true
	}
	for i, d := range s.live { // s.live[i] is save i+1's
		if first[i+1] {
			after = append(after, d)
		} else {
			others = append(others, d)
		}
	}
	return after, others
}

// settles returns, for each build started during the session, the quiet
// time between the last save before it and its start.
func (s *session) settles() []time.Duration {
	var out []time.Duration
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	for _, st := range s.logs.starts {
		i := sort.Search(len(s.saved), func(i int) bool { return s.saved[i].After(st) })
		if i > 0 {
			out = append(out, st.Sub(s.saved[i-1]))
		}
	}
	return out
}

func reportCosts(s *session, smp *sampler, treeTicks, servingTicks, supTicks int64) {
	settle := s.settles()
	s.logs.mu.Lock()
	builds, failed, tooks := len(s.logs.starts), s.logs.failed, s.logs.tooks
	s.logs.mu.Unlock()
	sec := func(t int64) string { return fmt.Sprintf("%.1f s", float64(t)/clkTck) }
	buildTicks := treeTicks - servingTicks - supTicks
	fmt.Println("| measure | value |")
	fmt.Println("|---|---|")
	fmt.Printf("| background builds during the session | %d started, %d failed |\n", builds, failed)
	fmt.Printf("| settle: last save to the build's start, p50 / min / max | %s / %s / %s |\n", benchutil.Ms(benchutil.Percentile(settle, 50)),
		benchutil.Ms(benchutil.Percentile(settle, 0)), benchutil.Ms(benchutil.Percentile(settle, 100)))
	fmt.Printf("| save to switch (one-file edit), p50 / p90 / max | %s / %s / %s |\n", secs(benchutil.Percentile(s.switchT, 50)),
		secs(benchutil.Percentile(s.switchT, 90)), secs(benchutil.Percentile(s.switchT, 100)))
	fmt.Printf("| the builds' own durations (took=) | %v |\n", tooks)
	fmt.Printf("| CPU of the background builds (zealgo build, go, compile, link) | %s in all, %s per build |\n", sec(buildTicks), perBuild(buildTicks, builds))
	fmt.Printf("| CPU of the serving processes (under load) / of the supervisor | %s / %s |\n", sec(servingTicks), sec(supTicks))
	smp.mu.Lock()
	defer smp.mu.Unlock()
	fmt.Printf("| RSS of supervisor + serving processes: one process / peak during the switches (old + new) | %s / %s (up to %d serving at once) |\n",
		benchutil.MiB(smp.oneServing), benchutil.MiB(smp.servingPeak), smp.servingMax)
	fmt.Printf("| peak RSS of a background build's processes | %s |\n", benchutil.MiB(smp.buildPeak))
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func perBuild(ticks int64, builds int) string {
	if builds == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f s", float64(ticks)/clkTck/float64(builds))
}
