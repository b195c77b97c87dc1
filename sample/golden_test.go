package main

import (
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/host/hosttest"
)

// TestGolden runs testdata/golden with hosttest against the repository's
// handler files on the application setup builds, as an application with
// its own main tests itself.
func TestGolden(t *testing.T) {
	hosttest.RunDir(t, "testdata/golden", hosttest.WithRoot(".."), hosttest.WithApp(func() *host.App {
		app := host.New()
		setup(app).SetHashCost(testHashCost)
		return app
	}))
}
