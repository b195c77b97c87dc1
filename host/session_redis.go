package host

import (
	"context"
	"errors"
	"fmt"
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
}

// newRedisBackend connects to addr, "host:port" or a redis:// URL, and
// checks that the server answers.
func newRedisBackend(addr string) (*redisBackend, error) {
	var opt *redis.Options
	if strings.Contains(addr, "://") {
		var err error
		if opt, err = redis.ParseURL(addr); err != nil {
			return nil, fmt.Errorf("zealgo: session redis %q: %w", addr, err)
		}
	} else {
		opt = &redis.Options{Addr: addr}
	}
	c := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("zealgo: session redis at %s does not answer: %w", opt.Addr, err)
	}
	return &redisBackend{c: c, prefix: "zealgo:session:"}, nil
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
