//go:build !linux

package supervisor

import "runtime/debug"

// LimitResources bounds this process, a supervised child: a goroutine's
// stack to maxStack bytes (debug.SetMaxStack), and its heap softly to 7/8
// of memory (debug.SetMemoryLimit). Only Linux enforces a hard memory
// bound (see limit_linux.go). Zero leaves a bound as it is.
func LimitResources(maxStack int, memory int64) error {
	if maxStack > 0 {
		debug.SetMaxStack(maxStack)
	}
	if memory > 0 {
		debug.SetMemoryLimit(memory - memory/8)
	}
	return nil
}
