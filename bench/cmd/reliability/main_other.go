//go:build !linux

package main

import (
	"fmt"
	"os"
)

// main: the driver finds the server's processes under /proc and signals
// them by pid.
func main() {
	fmt.Fprintln(os.Stderr, "reliability: needs Linux")
	os.Exit(2)
}
