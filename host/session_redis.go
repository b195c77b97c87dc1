package host

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisBackend keeps sessions in Redis under "zealgo:session:<id>", with
// the session's lifetime as the key's expiry, so that several instances
// behind a load balancer share them.
type redisBackend struct {
	c      *redis.Client
	prefix string
	addr   string // host:port, for the log
}

// newRedisBackend connects to addr, "host:port" or a URL that
// redis.ParseURL reads (redis://, rediss://, unix://), and checks that the
// server answers; from names the setting addr came from, for errors.
func newRedisBackend(addr, from string) (*redisBackend, error) {
	var opt *redis.Options
	if strings.Contains(addr, "://") {
		var err error
		if opt, err = redis.ParseURL(addr); err != nil {
			// url.Error quotes the whole URL, password included.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, fmt.Errorf("zealgo: session redis %q (%s): %w", redactURL(addr), from, err)
		}
	} else {
		opt = &redis.Options{Addr: addr}
	}
	c := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("zealgo: session redis at %s (%s) does not answer: %w", opt.Addr, from, err)
	}
	return &redisBackend{c: c, prefix: "zealgo:session:", addr: opt.Addr}, nil
}

// redactURL returns u without its password, for messages; a URL that does
// not parse is not shown.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}

// Load implements SessionBackend.
func (b *redisBackend) Load(ctx context.Context, id string) ([]byte, error) {
	data, err := b.c.Get(ctx, b.prefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrSessionNotFound
	}
	return data, err
}

// Save implements SessionBackend.
func (b *redisBackend) Save(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	return b.c.Set(ctx, b.prefix+id, data, ttl).Err()
}

// Delete implements SessionBackend.
func (b *redisBackend) Delete(ctx context.Context, id string) error {
	return b.c.Del(ctx, b.prefix+id).Err()
}

// Close closes the connections.
func (b *redisBackend) Close() error { return b.c.Close() }
