package jstask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zealgo/zealgo/internal/natsrv"
)

// taskConfig is task stream i of c: a work queue holding its share of
// Config.MaxQueued.
func taskConfig(c Config, i int) jetstream.StreamConfig {
	name, subj := c.names().taskStream(i)
	return jetstream.StreamConfig{
		Name:        name,
		Description: "zealgo tasks waiting for a worker",
		Subjects:    []string{subj},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  c.DuplicateWindow,
		MaxMsgs:     int64((c.MaxQueued + c.Streams - 1) / c.Streams),
		MaxBytes:    -1,
		Discard:     jetstream.DiscardNew,
		Replicas:    c.Replicas,
	}
}

// resultConfig is results stream i of c.
func resultConfig(c Config, i int) jetstream.StreamConfig {
	name, pref := c.names().resultStream(i)
	return jetstream.StreamConfig{
		Name:        name,
		Description: "zealgo task results, one subject per instance and task",
		Subjects:    []string{pref + ">"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      c.ResultRetention,
		Duplicates:  min(c.DuplicateWindow, c.ResultRetention),
		// One result per task: a second one (the task ran twice) is refused.
		MaxMsgsPerSubject:    1,
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
		MaxMsgs:              -1,
		MaxBytes:             -1,
		Replicas:             c.Replicas,
	}
}

// streamConfigs are the task, result and dead-letter streams of c.
func streamConfigs(c Config) []jetstream.StreamConfig {
	n := c.names()
	var out []jetstream.StreamConfig
	for i := range c.Streams {
		out = append(out, taskConfig(c, i))
	}
	for i := range c.ResultStreams {
		out = append(out, resultConfig(c, i))
	}
	return append(out, jetstream.StreamConfig{
		Name:        n.dead,
		Description: "zealgo tasks given up: list, retry or purge them with zealgo tasks",
		Subjects:    []string{n.deadPref + "*"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      c.DeadRetention,
		Duplicates:  min(c.DuplicateWindow, c.DeadRetention),
		MaxMsgs:     -1,
		MaxBytes:    -1,
		Replicas:    c.Replicas,
	})
}

// setupStreams creates the streams, or updates them to c, at start. A
// stream whose settings cannot be changed in place is an error that says
// what to do; it is never deleted.
func setupStreams(ctx context.Context, js jetstream.JetStream, c Config) error {
	for _, sc := range streamConfigs(c) {
		if err := setupStream(ctx, js, c, sc); err != nil {
			return err
		}
	}
	if err := setupIDs(ctx, js, c); err != nil {
		return err
	}
	err := natsrv.WhileForming(ctx, c.Logger, "bucket "+c.names().runs, func(ctx context.Context) error {
		_, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: c.names().runs,
			Description: "zealgo: how many times each task delivered again ran alone", TTL: 24 * time.Hour,
			Storage: jetstream.FileStorage, Replicas: c.Replicas})
		return err
	})
	if err != nil {
		return fmt.Errorf("zealgo: jstask: bucket %s: %w", c.names().runs, natsrv.TooFewServers(err))
	}
	return nil
}

// setupStream creates sc, or updates the stream to it when it differs.
func setupStream(ctx context.Context, js jetstream.JetStream, c Config, sc jetstream.StreamConfig) error {
	var st jetstream.Stream
	err := natsrv.WhileForming(ctx, c.Logger, "stream "+sc.Name, func(ctx context.Context) (err error) {
		st, err = js.Stream(ctx, sc.Name)
		return err
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		err = natsrv.WhileForming(ctx, c.Logger, "stream "+sc.Name, func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, sc)
			return err
		})
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("zealgo: jstask: create stream %s with %d replicas: %w", sc.Name, sc.Replicas, natsrv.TooFewServers(err))
		}
		c.Logger.Info("zealgo: jstask: stream created", "stream", sc.Name, "replicas", sc.Replicas)
		return nil
	}
	if err != nil {
		return fmt.Errorf("zealgo: jstask: stream %s: %w", sc.Name, err)
	}
	old := st.CachedInfo().Config
	if sameStream(old, sc) {
		return nil
	}
	// Another instance may be creating or updating it at the same time
	// on a cluster still placing its replicas: wait for that, as above.
	err = natsrv.WhileForming(ctx, c.Logger, "stream "+sc.Name, func(ctx context.Context) error {
		_, err := js.UpdateStream(ctx, sc)
		return err
	})
	if err != nil {
		return fmt.Errorf("zealgo: jstask: stream %s exists with settings that cannot be changed to zealgo's (%d replicas, "+
			"%v retention): %w; drain it and delete it (nats stream rm %s) or give this application another prefix",
			sc.Name, sc.Replicas, sc.Retention, natsrv.TooFewServers(err), sc.Name)
	}
	if old.Replicas != sc.Replicas {
		c.Logger.Info("zealgo: jstask: stream replicas changed", "stream", sc.Name, "from", old.Replicas, "to", sc.Replicas)
	}
	return nil
}

// sameStream reports whether the stream has the settings zealgo wants.
func sameStream(old, want jetstream.StreamConfig) bool {
	return old.Replicas == want.Replicas && old.MaxMsgs == want.MaxMsgs && old.MaxAge == want.MaxAge &&
		old.Duplicates == want.Duplicates && old.Discard == want.Discard && old.Retention == want.Retention &&
		old.MaxMsgsPerSubject == want.MaxMsgsPerSubject && old.Description == want.Description &&
		len(old.Subjects) == len(want.Subjects) && (len(old.Subjects) == 0 || old.Subjects[0] == want.Subjects[0])
}

// checkStreams reports a stream lost at run time: it is not created again,
// since its tasks and ends are gone, and what to do is said.
func checkStreams(ctx context.Context, js jetstream.JetStream, c Config) error {
	n := c.names()
	for _, name := range append(append(taskStreams(c), resultStreams(c)...), n.ids) {
		_, err := js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("%w: stream %s is not on the NATS server any more (it lost its data, or it was deleted); "+
				"the tasks or results it held are lost: restart zealgo to create it again, or restore the server's data", ErrStreamLost, name)
		}
		if err != nil {
			return fmt.Errorf("zealgo: jstask: stream %s: %w", name, err)
		}
	}
	return nil
}

// setupIDs creates the ids stream when it is missing, or updates its
// replicas. Its sequence, the block number, starts at the Unix time in
// milliseconds, so that a stream created again (the server lost its
// data) does not hand out the blocks of the lost one, as long as fewer
// than 1,000 blocks a second were taken on average. The ids (block ×
// 1024) stay below 2^53 until the year 2248, exact in a JSON number read
// as a float.
func setupIDs(ctx context.Context, js jetstream.JetStream, c Config) error {
	n := c.names()
	var st jetstream.Stream
	err := natsrv.WhileForming(ctx, c.Logger, "stream "+n.ids, func(ctx context.Context) (err error) {
		st, err = js.Stream(ctx, n.ids)
		return err
	})
	if err == nil {
		sc := st.CachedInfo().Config
		if sc.Replicas == c.Replicas {
			return nil
		}
		sc.Replicas = c.Replicas
		return setupStream(ctx, js, c, sc)
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("zealgo: jstask: stream %s: %w", n.ids, err)
	}
	sc := jetstream.StreamConfig{
		Name:        n.ids,
		Description: "zealgo task id blocks: the sequence is the block number",
		Subjects:    []string{n.idSubj},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxMsgs:     1,
		Replicas:    c.Replicas,
		FirstSeq:    uint64(time.Now().UnixMilli()),
	}
	err = natsrv.WhileForming(ctx, c.Logger, "stream "+n.ids, func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, sc)
		return err
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("zealgo: jstask: stream %s: %w", n.ids, natsrv.TooFewServers(err))
	}
	return nil
}

// taskStreams are the names of c's task streams.
func taskStreams(c Config) []string {
	out := make([]string, c.Streams)
	for i := range out {
		out[i], _ = c.names().taskStream(i)
	}
	return out
}

// resultStreams are the names of c's results streams.
func resultStreams(c Config) []string {
	out := make([]string, c.ResultStreams)
	for i := range out {
		out[i], _ = c.names().resultStream(i)
	}
	return out
}

// ensureWorkers creates the workers' durable consumer of a task stream,
// or updates it; each stream's has an equal share of MaxInFlight.
// The server delivers without limit; the worker enforces MaxDeliver so
// that the delivery after the last one reports the task as failed.
func ensureWorkers(ctx context.Context, js jetstream.JetStream, c Config, stream string) (jetstream.Consumer, error) {
	n := c.names()
	cons, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable:       n.workers,
		Description:   "zealgo task workers",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		MaxDeliver:    -1,
		MaxAckPending: (c.MaxInFlight + c.Streams - 1) / c.Streams,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		Replicas:      c.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("zealgo: jstask: consumer %s of %s: %w", n.workers, stream, err)
	}
	return cons, nil
}

// ensureResults creates the durable consumer of an instance's results,
// or updates it. A consumer unused for ResultRetention (its instance
// never came back) is removed by the server; the results stay in the
// stream until they expire, where a restart of the instance finds them.
func ensureResults(ctx context.Context, js jetstream.JetStream, c Config, instance string, i int) (jetstream.Consumer, error) {
	stream, pref := c.names().resultStream(i)
	name := "results-" + instance
	cons, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable:           name,
		Description:       "zealgo task results of instance " + instance,
		FilterSubject:     pref + instance + ".>",
		AckPolicy:         jetstream.AckExplicitPolicy,
		AckWait:           c.ResultAckWait,
		MaxDeliver:        -1,
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		InactiveThreshold: c.ResultRetention,
		Replicas:          c.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("zealgo: jstask: consumer %s of %s: %w", name, stream, err)
	}
	return cons, nil
}
