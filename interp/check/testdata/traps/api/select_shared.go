//go:build ignore

// The interpreter keeps a select statement's cases once per statement: two
// requests running this select at the same moment may wake on each other's
// channels. One request alone answers as built: {"got":"ready"}.
package main

import (
	"time"

	"github.com/zealgo/zealgo/host"
)

var select_shared = func(api *host.API) any {
	ready := make(chan string, 1)
	ready <- "ready"
	select {
	case v := <-ready:
		return map[string]any{"got": v}
	case <-time.After(time.Second):
		return map[string]any{"got": "timeout"}
	}
}
