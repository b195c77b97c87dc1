package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/taskproto"
)

// The fan-out of App.Broadcast across instances: each instance on NATS
// subscribes to one core NATS subject (no JetStream: a message reaches the
// instances connected when it is sent, as the connections it is for are),
// and publishes there what it broadcasts, with its room in a header and
// an origin that lets the sender skip its own message (it delivered it
// already). A task worker publishes only, on a connection of its own
// made on its first broadcast.

// natsPublisher is the application's core NATS connection.
type natsPublisher = *nats.Conn

// liveSubject carries the broadcasts of every instance.
const liveSubject = "zealgo.live.broadcast"

// The headers of a broadcast on liveSubject.
const (
	liveRoomHeader   = "Zealgo-Room"
	liveOriginHeader = "Zealgo-Origin"
)

// errBroadcastNoNATS: a task worker can reach the connections of its
// server only through NATS.
var errBroadcastNoNATS = errors.New("zealgo: Broadcast from a task needs NATS (--nats), which carries it to the server's connections")

// liveBus is the hub's side of NATS.
type liveBus struct {
	mu     sync.Mutex
	nc     *nats.Conn
	sub    *nats.Subscription
	origin string
	worker *taskproto.QueueConfig // a task worker's NATS, dialed on first use
	own    bool                   // nc is the worker's own connection
	worked bool                   // this process is a task worker
}

// subscribe starts receiving the other instances' broadcasts on nc and
// hands them to deliver.
func (b *liveBus) subscribe(nc *nats.Conn, deliver func(room, msg string)) error {
	b.nc, b.origin = nc, rand.Text()
	sub, err := nc.Subscribe(liveSubject, func(m *nats.Msg) {
		if m.Header.Get(liveOriginHeader) == b.origin {
			return
		}
		deliver(m.Header.Get(liveRoomHeader), string(m.Data))
	})
	if err != nil {
		return fmt.Errorf("zealgo: live rooms on NATS: %w", err)
	}
	b.sub = sub
	return nil
}

// forWorker makes b the bus of a task worker: q is its NATS, nil when
// the application runs without.
func (b *liveBus) forWorker(q *taskproto.QueueConfig) {
	b.worked, b.worker = true, q
}

// conn returns the connection to publish on: the application's, or in a
// task worker its own, made now; nil without NATS.
func (b *liveBus) conn() (*nats.Conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nc != nil || !b.worked {
		return b.nc, nil
	}
	if b.worker == nil {
		return nil, errBroadcastNoNATS
	}
	c, err := natsrv.Connect(context.Background(), b.worker.URL, natsrv.ConnectOptions{Name: "zealgo task worker", Token: b.worker.Token})
	if err != nil {
		return nil, fmt.Errorf("zealgo: broadcast: %w", err)
	}
	b.nc, b.own, b.origin = c.NC, true, rand.Text()
	return b.nc, nil
}

// publish sends msg for room to the other instances.
func (b *liveBus) publish(room, msg string) error {
	nc, err := b.conn()
	if nc == nil {
		return err
	}
	m := &nats.Msg{Subject: liveSubject, Header: nats.Header{}, Data: []byte(msg)}
	m.Header.Set(liveRoomHeader, room)
	m.Header.Set(liveOriginHeader, b.origin)
	if err := nc.PublishMsg(m); err != nil {
		return fmt.Errorf("zealgo: broadcast: %w", err)
	}
	if b.own { // a task's broadcast goes out before its result
		if err := nc.FlushTimeout(5 * time.Second); err != nil {
			return fmt.Errorf("zealgo: broadcast: %w", err)
		}
	}
	return nil
}

// close stops the subscription, and closes a worker's own connection
// after sending what it published.
func (b *liveBus) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sub != nil {
		_ = b.sub.Unsubscribe()
		b.sub = nil
	}
	if b.own && b.nc != nil {
		_ = b.nc.Drain()
	}
	b.nc = nil
}
