package jstask

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
)

// SpreadGroups are the streams of cfg whose leaders a natsrv.Spreader
// should spread over a cluster's servers, by group: the task streams
// (dispatch passes over one without a leader, so that one per server
// keeps it going when a server is lost), then the results and ids
// streams (the ends of tasks, and the ids reserved ahead), then the dead
// letters and the runs bucket. The host adds its buckets to the groups.
func SpreadGroups(cfg Config) [3][]string {
	if cfg.Prefix == "" {
		cfg.Prefix = "zealgo"
	}
	n := cfg.names()
	return [3][]string{{n.tasks, n.tasks + "_*"}, {n.results, n.results + "_*", n.ids}, {n.dead, "KV_" + n.runs}}
}

// workerStreams are the task streams the workers read: those of c, and
// any further ones left by a configuration with more (Config.Streams
// lowered), so that their tasks are drained, not lost.
func workerStreams(ctx context.Context, js jetstream.JetStream, c Config) ([]string, error) {
	left, err := leftoverStreams(ctx, js, c.names().tasks, c.Streams)
	if err != nil {
		return nil, err
	}
	out := taskStreams(c)
	for _, l := range left {
		out = append(out, l.name)
	}
	return out, nil
}

// readResultStreams are the results streams an instance reads: those
// of c, and any further ones left by a configuration with more
// (Config.ResultStreams lowered), so that their results are handed over,
// not lost. It returns their numbers.
func readResultStreams(ctx context.Context, js jetstream.JetStream, c Config) ([]int, error) {
	left, err := leftoverStreams(ctx, js, c.names().results, c.ResultStreams)
	if err != nil {
		return nil, err
	}
	out := make([]int, c.ResultStreams)
	for i := range out {
		out[i] = i
	}
	for _, l := range left {
		if l.i < maxStreams {
			out = append(out, l.i)
		}
	}
	return out, nil
}

// numbered is a stream named <base>_<i>.
type numbered struct {
	name string
	i    int
}

// leftoverStreams returns the streams on the server named base_<i> with
// i at least from: those a configuration with more of them left.
func leftoverStreams(ctx context.Context, js jetstream.JetStream, base string, from int) ([]numbered, error) {
	re := regexp.MustCompile("^" + regexp.QuoteMeta(base) + `_(\d+)$`)
	var out []numbered
	lister := js.StreamNames(ctx)
	for name := range lister.Name() {
		if m := re.FindStringSubmatch(name); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil && i >= from {
				out = append(out, numbered{name, i})
			}
		}
	}
	if err := lister.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return nil, fmt.Errorf("zealgo: jstask: list the %s streams: %w", base, err)
	}
	return out, nil
}

// taskStreamCount returns how many task streams of c's prefix there are
// on the server: the first and those numbered after it without a gap, at
// least 1. A tool that dispatches for the instances (Dead.Retry) spreads
// its tasks over them as they do.
func taskStreamCount(ctx context.Context, js jetstream.JetStream, c Config) (int, error) {
	have := map[string]bool{}
	lister := js.StreamNames(ctx)
	for name := range lister.Name() {
		have[name] = true
	}
	if err := lister.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return 0, fmt.Errorf("zealgo: jstask: list the task streams: %w", err)
	}
	n := 1
	for ; n < maxStreams; n++ {
		if name, _ := c.names().taskStream(n); !have[name] {
			break
		}
	}
	return n, nil
}
