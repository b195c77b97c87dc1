package jstask

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestTransientErrors: which publish errors dispatch tries again. A key
// whose first publish is still being stored (10158, seen under a full
// disk) is tried again, not refused: the retry is then answered as the
// first one's duplicate.
func TestTransientErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want bool
	}{
		{&jetstream.APIError{Code: 409, ErrorCode: errCodeDupInProcess}, true},
		{fmt.Errorf("publish: %w", &jetstream.APIError{Code: 409, ErrorCode: errCodeDupInProcess}), true},
		{&jetstream.APIError{Code: 503, ErrorCode: 10077}, false},
		{&jetstream.APIError{Code: 503, ErrorCode: 10008}, true},
		{&jetstream.APIError{Code: 400, ErrorCode: 10003}, false},
		{jetstream.ErrNoStreamResponse, true},
	}
	for _, c := range cases {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
