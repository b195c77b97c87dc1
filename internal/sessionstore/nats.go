package sessionstore

import (
	"context"
	"time"

	"github.com/zealgo/zealgo/internal/natskv"
)

// NATSBackend keeps sessions in a NATS JetStream key-value bucket
// (natskv.Sessions), so that every instance on the same NATS server or
// cluster shares them; with the NATS server zealgo embeds, nothing else
// needs to be installed. It does not own the connection: closing the
// application closes it.
type NATSBackend struct{ s *natskv.Sessions }

// NewNATSBackend returns the backend over s.
func NewNATSBackend(s *natskv.Sessions) *NATSBackend { return &NATSBackend{s: s} }

// Load implements Backend.
func (b *NATSBackend) Load(ctx context.Context, id string) ([]byte, error) {
	data, ok, err := b.s.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNotFound
	}
	return data, nil
}

// Save implements Backend.
func (b *NATSBackend) Save(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	return b.s.Save(ctx, id, data, ttl)
}

// Delete implements Backend.
func (b *NATSBackend) Delete(ctx context.Context, id string) error {
	return b.s.Delete(ctx, id)
}
