package jstask

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// renewFixture is a stream holding one message, a consumer with an ack
// wait of 600ms, and that message fetched from it.
func renewFixture(t *testing.T) (jetstream.Consumer, jetstream.Msg) {
	t.Helper()
	f := newFixture(t)
	ctx := context.Background()
	js := f.conn.JS
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RENEW", Subjects: []string{"renew"}}); err != nil {
		t.Fatal(err)
	}
	cons, err := js.CreateConsumer(ctx, "RENEW", jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "renew", []byte("task")); err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return cons, m
}

// redelivered waits up to wait for the message to come again and
// returns its delivery count, 0 when it did not.
func redelivered(t *testing.T, cons jetstream.Consumer, wait time.Duration) uint64 {
	t.Helper()
	m, err := cons.Next(jetstream.FetchMaxWait(wait))
	switch {
	case errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded):
		return 0
	case err != nil:
		t.Fatal(err)
	}
	meta, err := m.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	return meta.NumDelivered
}

// One renewer keeps a running task's message from being delivered again
// for several ack waits; once stopped, the message comes again, with
// its delivery count 2.
func TestRenewerKeepsTaskAlive(t *testing.T) {
	cons, m := renewFixture(t)
	r := newRenewer(200*time.Millisecond, func(err error) { t.Log(err) })
	r.start()
	defer r.close()
	stop := r.keepAlive(m, 0)
	if n := redelivered(t, cons, 2*time.Second); n != 0 { // 3 ack waits
		t.Fatalf("a task kept alive was delivered again (delivery %d)", n)
	}
	stop()
	if n := redelivered(t, cons, 5*time.Second); n != 2 {
		t.Fatalf("after the renewal stopped: delivery %d, want 2", n)
	}
}

// Past its time limit, a task is no longer renewed, and comes again.
func TestRenewerStopsAtLimit(t *testing.T) {
	cons, m := renewFixture(t)
	r := newRenewer(200*time.Millisecond, func(err error) { t.Log(err) })
	r.start()
	defer r.close()
	stop := r.keepAlive(m, 500*time.Millisecond)
	defer stop()
	start := time.Now()
	n := redelivered(t, cons, 5*time.Second)
	if n != 2 {
		t.Fatalf("a task past its limit: delivery %d, want 2", n)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Fatalf("delivered again after %v, within its limit", d)
	}
}
