package host

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/zealgo/zealgo/internal/natskv"
)

// windowCounter counts events per key in fixed windows aligned on the
// Unix epoch (natskv.Counter): Incr returns the count of key in the
// current window, this event included.
type windowCounter interface {
	Incr(ctx context.Context, key string, window time.Duration) (int64, error)
}

// sharedCounter returns the counter that every instance on the same NATS
// shares, or nil when this instance shares none (no NATS, or the embedded
// server): limits are then kept in this process. The rate-limit alias
// counts with it. (App.Throttle uses the counter's key-value store
// whenever NATS is on, embedded too: natsThrottle.)
func (st *natsState) sharedCounter() windowCounter {
	if st.counter == nil || !st.shared {
		return nil
	}
	return st.counter
}

// sharedRateStore is the rate-limit alias's store on a shared counter: a
// fixed window of one second (longer for a rate under one per second, up
// to an hour) that allows the rate, or the burst when larger, per client
// address.
type sharedRateStore struct {
	c      windowCounter
	log    *slog.Logger
	prefix string // the alias's arguments: one limit, one set of counts
	limit  int64
	window time.Duration
}

func newSharedRateStore(c windowCounter, log *slog.Logger, args []string, per float64, burst int) *sharedRateStore {
	s := &sharedRateStore{c: c, log: log, prefix: "rate-limit:" + strings.Join(args, ",") + ":",
		limit: int64(math.Ceil(per)), window: time.Second}
	if per < 1 {
		s.limit, s.window = 1, min(time.Duration(math.Round(float64(time.Second)/per)), time.Hour)
	}
	s.limit = max(s.limit, int64(burst))
	return s
}

// Allow counts one request of the client id and reports whether it is
// within the limit. When the counter does not answer, the request is let
// through and the failure logged: an outage of NATS does not close the
// application.
func (s *sharedRateStore) Allow(id string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := s.c.Incr(ctx, s.prefix+id, s.window)
	if err != nil {
		s.log.Warn("zealgo: rate-limit: the shared counter failed; request let through", "err", err)
		return true, nil
	}
	return n <= s.limit, nil
}

// natsThrottle is the ThrottleStore on NATS's key-value store
// (natskv.Counter.Reserve): the attempts outlive a process, and instances
// that share the NATS share them.
type natsThrottle struct{ *natskv.Counter }

func (n natsThrottle) Reset(ctx context.Context, key string) error { return n.Forget(ctx, key) }
