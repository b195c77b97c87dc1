package taskpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zealgo/zealgo/internal/taskproto"
)

// Calls carries the requests that the code of tasks in a worker process
// makes to its server (taskproto.KindCall), and their replies: the
// server answers them with Config.OnCall. Make it before ServeWorkerCalls
// and hand it to what the tasks use.
type Calls struct {
	mu   sync.Mutex
	w    *taskproto.Writer // nil until the worker runs, and after its server left
	next int64
	wait map[int64]chan *taskproto.Message
}

// NewCalls returns Calls not yet attached to a server.
func NewCalls() *Calls { return &Calls{wait: map[int64]chan *taskproto.Message{}} }

// errNoServer: the worker does not (or no longer) talk to a server.
var errNoServer = errors.New("zealgo: worker: no server to call")

// Call sends op with body to the server and returns its answer; an
// error of the server comes back as an error.
func (c *Calls) Call(ctx context.Context, op string, body json.RawMessage) (json.RawMessage, error) {
	ch := make(chan *taskproto.Message, 1)
	c.mu.Lock()
	w := c.w
	if w == nil {
		c.mu.Unlock()
		return nil, errNoServer
	}
	c.next++
	id := c.next
	c.wait[id] = ch
	c.mu.Unlock()
	defer c.forget(id)
	if err := w.Write(&taskproto.Message{Kind: taskproto.KindCall, ID: id, Op: op, Args: body}); err != nil {
		return nil, fmt.Errorf("zealgo: worker: call %s: %w", op, err)
	}
	select {
	case m := <-ch:
		if m == nil {
			return nil, errNoServer
		}
		if m.Err != "" {
			return nil, errors.New(m.Err)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("zealgo: worker: call %s: %w", op, ctx.Err())
	}
}

func (c *Calls) forget(id int64) {
	c.mu.Lock()
	delete(c.wait, id)
	c.mu.Unlock()
}

// attach starts sending calls on w.
func (c *Calls) attach(w *taskproto.Writer) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.w = w
	c.mu.Unlock()
}

// reply hands a Reply to the call waiting for it.
func (c *Calls) reply(m *taskproto.Message) {
	if c == nil {
		return
	}
	c.mu.Lock()
	ch := c.wait[m.ID]
	c.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// detach fails the waiting calls and every later one: the server left.
func (c *Calls) detach() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w = nil
	for id, ch := range c.wait {
		ch <- nil
		delete(c.wait, id)
	}
}

// callTimeout bounds the server's answer to one call.
const callTimeout = 30 * time.Second

// answer runs a worker's Call with Config.OnCall and writes the Reply.
func (p *Pool) answer(wp *workerProc, m *taskproto.Message) {
	rep := &taskproto.Message{Kind: taskproto.KindReply, ID: m.ID}
	if p.cfg.OnCall == nil {
		rep.Err = "zealgo: the server takes no calls from its task workers"
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		res, err := p.cfg.OnCall(ctx, m.Op, m.Args)
		cancel()
		if err != nil {
			rep.Err = err.Error()
		} else {
			rep.Result = res
		}
	}
	if err := wp.w.Write(rep); err != nil {
		p.log.Warn("task worker: answering a call", "worker", wp.slot, "pid", wp.pid, "op", m.Op, "err", err)
	}
}
