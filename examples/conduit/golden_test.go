package conduit_test

import (
	"testing"

	"github.com/zealgo/zealgo/host/hosttest"
)

// TestGolden runs the archives of testdata/golden on the example's own
// files, interpreted in this process, each on a fresh database: a quick
// check that -short keeps.
func TestGolden(t *testing.T) {
	t.Setenv("CONDUIT_JWT_SECRET", secret)
	hosttest.RunDir(t, "testdata/golden", hosttest.WithRoot("."))
}
