//go:build unix

package host

import "syscall"

// lowerPriority makes the process pid (a background build, and the
// compilers it starts) yield the CPU to the serving processes: nice 10.
func lowerPriority(pid int) {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, pid, 10)
}
