//go:build !unix

package host

import "os/exec"

// lowerPriority does nothing where tiered serve cannot supervise.
func lowerPriority(int) {}

// ownGroup does nothing where tiered serve cannot supervise.
func ownGroup(*exec.Cmd) {}
