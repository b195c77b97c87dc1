//go:build ignore

// os/exec is not linked into the interpreter.
package main

import (
	"os/exec"

	"github.com/zealgo/zealgo/host"
)

var not_linked_exec = func(api *host.API) any {
	out, err := exec.Command("date").Output()
	return map[string]any{"out": string(out), "err": err}
}
