package natskv

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Admit is the rule of Reserve, on the times (Unix nanoseconds,
// ascending) of the attempts a key has made: those older than window
// before now are dropped; with limit left, now is added and is the
// attempt's ticket (made later than the last one, so that each ticket is
// unique); else nothing is added and wait is how long until the oldest
// leaves the window. So at most limit attempts are counted within any
// window, a rolling one.
func Admit(stamps []int64, now int64, limit int, window time.Duration) (kept []int64, ticket int64, wait time.Duration) {
	from := 0
	for from < len(stamps) && stamps[from] <= now-int64(window) {
		from++
	}
	kept = stamps[from:]
	if len(kept) >= limit {
		return kept, 0, time.Duration(kept[0] + int64(window) - now)
	}
	ticket = now
	if n := len(kept); n > 0 && ticket <= kept[n-1] {
		ticket = kept[n-1] + 1
	}
	return append(kept, ticket), ticket, 0
}

// Withdraw returns stamps without ticket.
func Withdraw(stamps []int64, ticket int64) []int64 {
	for i, s := range stamps {
		if s == ticket {
			return append(stamps[:i:i], stamps[i+1:]...)
		}
	}
	return stamps
}

// Reserve counts an attempt of key now, unless key has made limit
// attempts within the last window (Admit): then it counts none and
// returns how long to wait. Concurrent reservations, from any instance,
// are each a compare-and-set on the key's revision, retried on conflict,
// so that no more than limit are ever counted. window is at most the
// counter's MaxWindow; key at most 256 bytes.
func (c *Counter) Reserve(ctx context.Context, key string, limit int, window time.Duration) (ticket int64, wait time.Duration, err error) {
	if window <= 0 || window > c.maxWindow {
		return 0, 0, fmt.Errorf("zealgo: natskv: window %v: want more than 0 and at most %v", window, c.maxWindow)
	}
	err = c.update(ctx, key, func(stamps []int64) ([]int64, bool) {
		var kept []int64
		kept, ticket, wait = Admit(stamps, c.now().UnixNano(), limit, window)
		return kept, ticket != 0 // a refusal writes nothing
	})
	return ticket, wait, err
}

// Release uncounts the attempt of key that Reserve counted as ticket.
func (c *Counter) Release(ctx context.Context, key string, ticket int64) error {
	return c.update(ctx, key, func(stamps []int64) ([]int64, bool) {
		kept := Withdraw(stamps, ticket)
		return kept, len(kept) != len(stamps)
	})
}

// Forget uncounts every attempt of key.
func (c *Counter) Forget(ctx context.Context, key string) error {
	k, err := attemptsKey(key)
	if err != nil {
		return err
	}
	if err := c.kv.Delete(ctx, k); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("zealgo: natskv: forget %q: %w", key, err)
	}
	return nil
}

// update replaces the attempts of key by what change makes of them (when
// it reports a change), in a compare-and-set retried on conflict.
func (c *Counter) update(ctx context.Context, key string, change func([]int64) ([]int64, bool)) error {
	k, err := attemptsKey(key)
	if err != nil {
		return err
	}
	for range maxAttempts {
		err := c.swap(ctx, k, change)
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return fmt.Errorf("zealgo: natskv: attempts of %q: %w", key, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("zealgo: natskv: attempts of %q: %w", key, ctx.Err())
		}
	}
	return fmt.Errorf("zealgo: natskv: attempts of %q: still conflicting after %d tries", key, maxAttempts)
}

// swap makes one compare-and-set attempt of update.
func (c *Counter) swap(ctx context.Context, k string, change func([]int64) ([]int64, bool)) error {
	var stamps []int64
	var rev uint64
	e, err := c.kv.Get(ctx, k)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
	case err != nil:
		return err
	default:
		rev = e.Revision()
		if stamps, err = parseStamps(string(e.Value())); err != nil {
			return err
		}
	}
	stamps, changed := change(stamps)
	if !changed {
		return nil
	}
	v := []byte(formatStamps(stamps))
	if rev == 0 {
		_, err = c.kv.Create(ctx, k, v)
	} else {
		_, err = c.kv.Update(ctx, k, v, rev)
	}
	return err
}

// attemptsKey is the bucket key of key's attempts: apart from Incr's
// keys, which begin with "k".
func attemptsKey(key string) (string, error) {
	if len(key) > 256 {
		return "", fmt.Errorf("zealgo: natskv: attempts key of %d bytes: the bound is 256", len(key))
	}
	return "a" + base64.RawURLEncoding.EncodeToString([]byte(key)), nil
}

func parseStamps(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	stamps := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("attempts hold %q", s)
		}
		stamps[i] = n
	}
	return stamps, nil
}

func formatStamps(stamps []int64) string {
	b := make([]byte, 0, 20*len(stamps))
	for i, s := range stamps {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, s, 10)
	}
	return string(b)
}
