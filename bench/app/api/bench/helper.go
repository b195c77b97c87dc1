//go:build ignore

package main

import (
	"github.com/zealgo/zealgo/bench/benchlib"
	"github.com/zealgo/zealgo/host"
)

// helper returns the same 100 records as work.go, built by a compiled
// helper the application provides.
var helper = func(api *host.API, recs *benchlib.Records) any {
	return map[string]any{"count": 100, "records": recs.Build(100)}
}
