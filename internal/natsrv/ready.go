package natsrv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNotReady matches (errors.Is) the error of WhileForming when the
// cluster was still not ready when its context ended: leaders being
// elected, replicas that cannot be placed yet.
var ErrNotReady = errors.New("zealgo: nats: the cluster is not ready")

// ErrTooFewServers matches (errors.Is) an error of the server that has
// fewer servers, or less room, than the replicas asked for: no suitable
// peers (10005), insufficient resources (10023), replicas on a server
// that is not clustered (10074).
var ErrTooFewServers = errors.New("zealgo: nats: the NATS server or cluster has fewer servers than replicas: choose fewer with --nats-replicas")

// The API errors of a cluster that is forming, or too small;
// jetstream.APIError matches them by their code with errors.Is.
var (
	errNoPeers      = &jetstream.APIError{ErrorCode: 10005} // no suitable peers for placement
	errNotAvailable = &jetstream.APIError{ErrorCode: 10008} // JetStream system temporarily unavailable
	errInsufficient = &jetstream.APIError{ErrorCode: 10023} // insufficient resources
	errNotClustered = &jetstream.APIError{ErrorCode: 10074} // replicas > 1 not supported in non-clustered mode
)

// NotReady reports whether err may go away once the cluster has formed:
// no answer in time or no responders (a leader being elected), JetStream
// temporarily unavailable, or no suitable peers for the replicas yet (a
// node that has just joined is not known to the leader yet).
func NotReady(err error) bool {
	return errors.Is(err, errNoPeers) || errors.Is(err, errNotAvailable) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// TooFewServers wraps err with ErrTooFewServers when the server refused
// replicas it cannot place; else it returns err.
func TooFewServers(err error) error {
	if errors.Is(err, errNoPeers) || errors.Is(err, errInsufficient) || errors.Is(err, errNotClustered) {
		return fmt.Errorf("%w: %w", ErrTooFewServers, err)
	}
	return err
}

// attemptTimeout bounds one call of WhileForming's f.
const attemptTimeout = 5 * time.Second

// WhileForming calls f, and again while its error is NotReady and ctx
// lives, a quarter of a second apart, saying so on log (what names the
// stream or bucket): at start, on a cluster that has just formed, a
// stream or bucket is created or found only once the cluster has elected
// its leaders and knows its nodes. Each call gets a context of its own,
// bounded by ctx and 5 seconds. An error still NotReady when ctx ends is
// wrapped with ErrNotReady, and one of replicas that cannot be placed
// with ErrTooFewServers; when the last attempt only timed out, the error
// is the cluster's last answer before it.
func WhileForming(ctx context.Context, log *slog.Logger, what string, f func(ctx context.Context) error) error {
	if log == nil {
		log = slog.Default()
	}
	var told error // the last error the cluster gave, not a timeout
	for {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := f(actx)
		cancel()
		if err == nil || !NotReady(err) {
			return err
		}
		if !timedOut(err) || told == nil {
			told = err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %s: %w", ErrNotReady, what, TooFewServers(told))
		}
		log.Warn("zealgo: waiting for the NATS cluster: electing leaders or placing replicas", "for", what, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s: %w", ErrNotReady, what, TooFewServers(told))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// timedOut reports whether err is only the end of an attempt's time: when
// ctx ends during an attempt, WhileForming reports what the cluster said
// before (say, too few servers for the replicas) rather than the timeout.
func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, nats.ErrTimeout)
}
