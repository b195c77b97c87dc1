package jstask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// spreadLeaders moves the leaders of the task streams apart, one per
// server where it can: a stream whose leader already leads another is
// asked to step down in favour of a replica that leads none
// (nats-server's leader stepdown with a preferred placement). Losing a
// server then stops one task stream, and dispatch goes on through the
// others while the cluster elects its new leader. It is done at start;
// what fails is logged, since dispatch works with the leaders anywhere.
func spreadLeaders(ctx context.Context, js jetstream.JetStream, c Config) {
	if c.Streams < 2 || c.Replicas < 2 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	led := map[string]bool{}
	var crowded []*jetstream.StreamInfo
	for _, name := range taskStreams(c) {
		st, err := js.Stream(ctx, name)
		if err != nil {
			c.Logger.Debug("zealgo: jstask: spread the task streams' leaders", "stream", name, "err", err)
			return
		}
		info := st.CachedInfo()
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return // not clustered, or electing
		}
		if led[info.Cluster.Leader] {
			crowded = append(crowded, info)
		}
		led[info.Cluster.Leader] = true
	}
	for _, info := range crowded {
		for _, r := range info.Cluster.Replicas {
			if r.Offline || !r.Current || led[r.Name] {
				continue
			}
			if err := stepDown(ctx, js, info.Config.Name, r.Name); err != nil {
				c.Logger.Debug("zealgo: jstask: spread the task streams' leaders", "stream", info.Config.Name, "err", err)
				break
			}
			c.Logger.Info("zealgo: jstask: task stream leader moved", "stream", info.Config.Name,
				"from", info.Cluster.Leader, "to", r.Name)
			led[r.Name] = true
			break
		}
	}
}

// stepDown asks the leader of stream to hand over to the server named to.
func stepDown(ctx context.Context, js jetstream.JetStream, stream, to string) error {
	prefix := js.Options().APIPrefix
	if prefix == "" {
		prefix = jetstream.DefaultAPIPrefix
	}
	body, _ := json.Marshal(map[string]any{"placement": map[string]string{"preferred": to}})
	m, err := js.Conn().RequestWithContext(ctx, prefix+"STREAM.LEADER.STEPDOWN."+stream, body)
	if err != nil {
		return fmt.Errorf("zealgo: jstask: step down the leader of %s: %w", stream, err)
	}
	var resp struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return fmt.Errorf("zealgo: jstask: step down the leader of %s: %w", stream, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("zealgo: jstask: step down the leader of %s: %s", stream, resp.Error.Description)
	}
	return nil
}

// workerStreams are the task streams the workers read: those of c, and
// any further ones left by a configuration with more (Config.Streams
// lowered), so that their tasks are drained, not lost.
func workerStreams(ctx context.Context, js jetstream.JetStream, c Config) ([]string, error) {
	out := taskStreams(c)
	re := regexp.MustCompile("^" + regexp.QuoteMeta(c.names().tasks) + `_(\d+)$`)
	lister := js.StreamNames(ctx)
	for name := range lister.Name() {
		if m := re.FindStringSubmatch(name); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil && i >= c.Streams {
				out = append(out, name)
			}
		}
	}
	if err := lister.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return nil, fmt.Errorf("zealgo: jstask: list the task streams: %w", err)
	}
	return out, nil
}
