package jstask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ensureStreams creates the three streams, or updates them to c.
func ensureStreams(ctx context.Context, js jetstream.JetStream, c Config) error {
	n := c.names()
	dup := c.DuplicateWindow
	if dup > c.ResultRetention {
		dup = c.ResultRetention
	}
	streams := []jetstream.StreamConfig{{
		Name:        n.tasks,
		Description: "zealgo tasks waiting for a worker",
		Subjects:    []string{n.taskSubj},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  c.DuplicateWindow,
		Replicas:    c.Replicas,
	}, {
		Name:        n.results,
		Description: "zealgo task results, one subject per instance and task",
		Subjects:    []string{n.resPref + ">"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      c.ResultRetention,
		Duplicates:  dup,
		// One result per task: a second one (the task ran twice) is refused.
		MaxMsgsPerSubject:    1,
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
		MaxMsgs:              -1,
		MaxBytes:             -1,
		Replicas:             c.Replicas,
	}}
	for _, sc := range streams {
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("zealgo: jstask: stream %s: %w", sc.Name, err)
		}
	}
	return ensureIDs(ctx, js, c)
}

// ensureIDs creates the ids stream when it is missing. Its sequence, the
// block number, starts at the Unix time in milliseconds, so that a
// stream created again (the server lost its data) does not hand out the
// blocks of the lost one, as long as fewer than 1,000 blocks a second
// were taken on average. The ids (block × 1024) stay below 2^53 until
// the year 2248, exact in a JSON number read as a float.
func ensureIDs(ctx context.Context, js jetstream.JetStream, c Config) error {
	n := c.names()
	_, err := js.Stream(ctx, n.ids)
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		if err != nil {
			return fmt.Errorf("zealgo: jstask: stream %s: %w", n.ids, err)
		}
		return nil
	}
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name:        n.ids,
		Description: "zealgo task id blocks: the sequence is the block number",
		Subjects:    []string{n.idSubj},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxMsgs:     1,
		Replicas:    c.Replicas,
		FirstSeq:    uint64(time.Now().UnixMilli()),
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("zealgo: jstask: stream %s: %w", n.ids, err)
	}
	return nil
}

// ensureWorkers creates the workers' durable consumer, or updates it.
// The server delivers without limit; the worker enforces MaxDeliver so
// that the delivery after the last one reports the task as failed.
func ensureWorkers(ctx context.Context, js jetstream.JetStream, c Config) (jetstream.Consumer, error) {
	n := c.names()
	cons, err := js.CreateOrUpdateConsumer(ctx, n.tasks, jetstream.ConsumerConfig{
		Durable:       n.workers,
		Description:   "zealgo task workers",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		MaxDeliver:    -1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("zealgo: jstask: consumer %s of %s: %w", n.workers, n.tasks, err)
	}
	return cons, nil
}

// ensureResults creates the durable consumer of an instance's results,
// or updates it.
func ensureResults(ctx context.Context, js jetstream.JetStream, c Config, instance string) (jetstream.Consumer, error) {
	n := c.names()
	name := "results-" + instance
	cons, err := js.CreateOrUpdateConsumer(ctx, n.results, jetstream.ConsumerConfig{
		Durable:       name,
		Description:   "zealgo task results of instance " + instance,
		FilterSubject: n.resPref + instance + ".>",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.ResultAckWait,
		MaxDeliver:    -1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("zealgo: jstask: consumer %s of %s: %w", name, n.results, err)
	}
	return cons, nil
}
