//go:build unix

package host

import (
	"os/exec"
	"syscall"
)

// lowerPriority makes the process pid (a background build, and the
// compilers it starts) yield the CPU to the serving processes: nice 10.
func lowerPriority(pid int) {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, pid, 10)
}

// ownGroup runs cmd in a process group of its own, all of which is
// killed when its context is done: the go command and its compilers too.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
