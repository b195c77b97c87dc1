package jstask

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// idBlock is how many task ids one message on the ids stream reserves.
const idBlock = 1 << 10

// Reserve ahead: a client keeps enough spare blocks of ids for about
// idAhead of dispatch at its recent pace (at least one block, at most
// maxSpare), refilled in the background, so that dispatch goes on while
// the ids stream's leader is being elected again (4 to 9 s).
const (
	idAhead  = 15 * time.Second
	maxSpare = 256
)

// idReserve is a client's reserved task ids: the block in use and the
// spare ones.
type idReserve struct {
	mu        sync.Mutex
	next, end int64   // the ids left in the block in use: [next, end)
	spare     []int64 // the first ids of the spare blocks
	refilling bool
	// The ids handed out in the current window of idAhead and in the
	// one before: the pace to reserve for.
	winStart  time.Time
	cur, prev int64
}

// want is how many spare blocks to keep: enough for idAhead at the pace
// of the last window and the current one (a window not yet idAhead long
// counts at its own pace: a burst at start reserves for what is to
// come), and one more.
func (r *idReserve) want() int {
	now := time.Now()
	if now.Sub(r.winStart) > idAhead {
		r.prev, r.cur = r.cur, 0
		if now.Sub(r.winStart) > 2*idAhead {
			r.prev = 0
		}
		r.winStart = now
	}
	span := max(now.Sub(r.winStart), time.Second)
	if r.prev > 0 {
		span += idAhead
	}
	ahead := (r.prev + r.cur) * int64(idAhead/time.Millisecond) / int64(span/time.Millisecond)
	return min(int(ahead/idBlock)+1, maxSpare)
}

// NextID returns a new task id, unique across all instances sharing the
// streams and across their restarts. Ids come in blocks of 1024 reserved
// through the ids stream (see setupIDs); they are positive and below
// 2^53. Blocks are reserved ahead (idAhead), so that a new id needs the
// ids stream only when the spare ones ran out.
func (c *Client) NextID(ctx context.Context) (int64, error) {
	r := &c.ids
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == r.end {
		if len(r.spare) > 0 {
			r.next, r.spare = r.spare[0], r.spare[1:]
		} else {
			first, err := c.reserveBlock(ctx)
			if err != nil {
				return 0, err
			}
			r.next = first
		}
		r.end = r.next + idBlock
	}
	id := r.next
	r.next++
	r.cur++
	if len(r.spare) < r.want() && !r.refilling {
		r.refilling = true
		go c.refillIDs()
	}
	return id, nil
}

// reserveBlock reserves one block of ids and returns its first id.
func (c *Client) reserveBlock(ctx context.Context) (int64, error) {
	ack, err := c.publish(ctx, nats.NewMsg(c.n.idSubj), jetstream.WithExpectStream(c.n.ids))
	if err != nil {
		return 0, fmt.Errorf("zealgo: jstask: reserve task ids: %w", err)
	}
	return int64(ack.Sequence) * idBlock, nil
}

// refillIDs reserves spare blocks until there are as many as wanted; a
// failure (the ids stream has no leader for longer than 30s) ends it,
// and the next NextID starts it again.
func (c *Client) refillIDs() {
	r := &c.ids
	for {
		r.mu.Lock()
		if len(r.spare) >= r.want() {
			r.refilling = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		first, err := c.reserveBlock(ctx)
		cancel()
		r.mu.Lock()
		if err != nil {
			r.refilling = false
			r.mu.Unlock()
			c.cfg.Logger.Warn("zealgo: jstask: reserve task ids ahead", "err", err)
			return
		}
		r.spare = append(r.spare, first)
		r.mu.Unlock()
	}
}
