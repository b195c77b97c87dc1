//go:build !unix

package supervisor

import (
	"net"
	"os"
	"syscall"
)

// Supported reports whether Run can supervise children on this system.
const Supported = false

func sysProcAttr() *syscall.SysProcAttr { return nil }

func stopProcess(p *os.Process) error { return p.Kill() }

func killProcess(p *os.Process) { _ = p.Kill() }

func listenerFile(net.Listener) (*os.File, error) { return nil, ErrUnsupported }

// Current returns nil: without a supervisor, the program serves
// in-process.
func Current() (*Child, error) { return nil, nil }
