package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisBackend keeps sessions in Redis under "zealgo:session:<id>", with
// the session's lifetime as the key's expiry, so that several instances
// behind a load balancer share them.
type RedisBackend struct {
	c      *redis.Client
	prefix string
	addr   string // host:port, for the log
}

// NewRedisBackend connects to addr, "host:port" or a URL that
// redis.ParseURL reads (redis://, rediss://, unix://), and checks that the
// server answers; from names the setting addr came from, for errors. No
// error shows the URL's password.
func NewRedisBackend(addr, from string) (*RedisBackend, error) {
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
	return &RedisBackend{c: c, prefix: "zealgo:session:", addr: opt.Addr}, nil
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

// Addr returns the server's address, host:port, without credentials.
func (b *RedisBackend) Addr() string { return b.addr }

// Load implements Backend.
func (b *RedisBackend) Load(ctx context.Context, id string) ([]byte, error) {
	data, err := b.c.Get(ctx, b.prefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return data, err
}

// Save implements Backend.
func (b *RedisBackend) Save(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	return b.c.Set(ctx, b.prefix+id, data, ttl).Err()
}

// Delete implements Backend.
func (b *RedisBackend) Delete(ctx context.Context, id string) error {
	return b.c.Del(ctx, b.prefix+id).Err()
}

// Close closes the connections.
func (b *RedisBackend) Close() error { return b.c.Close() }
