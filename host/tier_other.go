//go:build !unix

package host

// lowerPriority does nothing where tiered serve cannot supervise.
func lowerPriority(int) {}
