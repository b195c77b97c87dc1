package supervisor

import (
	"fmt"
	"runtime/debug"
	"syscall"
)

// LimitResources bounds this process, a supervised child whose death the
// supervisor repairs, so that a runaway handler ends it quickly instead of
// taking the machine's memory first:
//
//   - maxStack bounds a goroutine's stack (debug.SetMaxStack): a recursion
//     past it ends the process at once ("goroutine stack exceeds").
//   - memory bounds its memory: the garbage collector works harder as the
//     heap nears 7/8 of it (debug.SetMemoryLimit), and mapping more than it
//     fails (RLIMIT_DATA, inherited by the processes it starts), which ends
//     the process ("out of memory") instead of letting it grow until the
//     system's OOM killer picks a victim. Race-detector builds, which map
//     terabytes of shadow memory, get the soft bound only.
//
// Zero leaves a bound as it is.
func LimitResources(maxStack int, memory int64) error {
	if maxStack > 0 {
		debug.SetMaxStack(maxStack)
	}
	if memory <= 0 {
		return nil
	}
	debug.SetMemoryLimit(memory - memory/8)
	if raceEnabled {
		return nil
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &lim); err != nil {
		return fmt.Errorf("zealgo: supervised: memory limit: %w", err)
	}
	lim.Cur = min(uint64(memory), lim.Max) // the soft limit; the hard one stays
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &lim); err != nil {
		return fmt.Errorf("zealgo: supervised: memory limit: %w", err)
	}
	return nil
}
