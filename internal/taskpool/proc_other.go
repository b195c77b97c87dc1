//go:build !unix

package taskpool

import (
	"os"
	"syscall"
)

// workerSysProcAttr returns the default process attributes.
func workerSysProcAttr() *syscall.SysProcAttr { return nil }

// killWorker kills a task worker by its pid.
func killWorker(p *os.Process) {
	if p != nil {
		_ = p.Kill()
	}
}
