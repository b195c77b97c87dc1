//go:build unix

package taskpool

import (
	"os"
	"syscall"
)

// workerSysProcAttr puts a task worker in a process group of its own, so
// that a Ctrl-C in the terminal reaches the server alone, which then stops
// its workers in order.
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// killWorker kills a task worker and the processes it started, by its
// process group (its pid), falling back to the pid alone.
func killWorker(p *os.Process) {
	if p == nil {
		return
	}
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		_ = p.Kill()
	}
}
