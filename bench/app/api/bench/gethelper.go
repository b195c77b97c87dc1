//go:build ignore

package main

import (
	"github.com/zealgo/zealgo/bench/benchlib"
	"github.com/zealgo/zealgo/host"
)

// gethelper answers as api/php/get.go does, with the body compiled
// (benchlib.QueryParams): what is left is the framework and one call into
// the interpreter, the floor of an interpreted handler.
var gethelper = func(api *host.API) any {
	return benchlib.QueryParams(api.Req.Get)
}
