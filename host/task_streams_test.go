package host_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// TestTaskStreamsBySync: the embedded server alone spreads tasks over 3
// task streams when it syncs every write (the default), whose writes
// then wait for the disk side by side, and keeps one when it syncs at
// an interval; NATSConfig.Tasks.Streams chooses. Tasks run on each.
func TestTaskStreamsBySync(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, sync string
		streams    int // NATSConfig.Tasks.Streams
		want       []string
	}{
		{"always", "", 0, []string{"ZEALGO_TASKS", "ZEALGO_TASKS_1", "ZEALGO_TASKS_2"}},
		{"interval", "1s", 0, []string{"ZEALGO_TASKS"}},
		{"chosen", "1s", 2, []string{"ZEALGO_TASKS", "ZEALGO_TASKS_1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ta := newTaskApp(t, natsTaskFiles, 1, true, natsOpts(host.NATSEmbedded), host.WithConfig(func(cfg *host.Config) {
				cfg.NATS.Sync, cfg.NATS.Tasks.Streams = c.sync, c.streams
			}))
			for i := range 6 {
				if f := ta.run(t, "/task/info", i); f.err != nil {
					t.Fatalf("task %d: %v", i, f.err)
				}
			}
			streams, err := filepath.Glob(filepath.Join(ta.root, "data", "nats", "jetstream", "*", "streams", "ZEALGO_TASKS*"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range streams {
				got = append(got, filepath.Base(s))
			}
			if len(got) != len(c.want) {
				t.Fatalf("task streams %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("task streams %v, want %v", got, c.want)
				}
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(streams[0]), "ZEALGO_RESULTS")); err != nil {
				t.Errorf("no results stream beside the task streams: %v", err)
			}
		})
	}
}
