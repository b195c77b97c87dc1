package testutil

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStreamSettled reports whether every consumer of the named streams has
// delivered all it holds and had each delivery acknowledged: JetStream
// then delivers nothing again, so a test that polls it until true knows
// that no second delivery (of a task, of its end) can still come. A
// stream that does not exist counts as settled.
func JetStreamSettled(js jetstream.JetStream, streams ...string) bool {
	ctx := context.Background()
	for _, name := range streams {
		st, err := js.Stream(ctx, name)
		if err != nil {
			return errors.Is(err, jetstream.ErrStreamNotFound)
		}
		list := st.ListConsumers(ctx)
		for info := range list.Info() {
			if info.NumPending != 0 || info.NumAckPending != 0 {
				return false
			}
		}
		if list.Err() != nil {
			return false
		}
	}
	return true
}
