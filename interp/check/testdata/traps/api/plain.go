//go:build ignore

// A file with no trap: check accepts it and it serves as written.
package main

import (
	"sort"
	"strings"

	"github.com/zealgo/zealgo/host"
)

var plain = func(api *host.API) any {
	words := strings.Fields("pear apple fig")
	sort.Strings(words)
	return map[string]any{"words": words, "method": api.Method()}
}
