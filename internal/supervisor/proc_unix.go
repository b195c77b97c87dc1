//go:build unix

package supervisor

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// Supported reports whether Run can supervise children on this system.
const Supported = true

// sysProcAttr puts a child in a process group of its own, so that a
// Ctrl-C in the terminal reaches the supervisor alone, which then stops
// its children in order.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// stopProcess asks a child to shut down gracefully.
func stopProcess(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// killProcess ends a child at once.
func killProcess(p *os.Process) { _ = p.Kill() }

// The files a child inherits, as Run numbers them.
const (
	fdListener = 3
	fdStatus   = 4
	fdControl  = 5
)

// Current returns this process's link to the supervisor that started it,
// or nil when no supervisor did. It takes the inherited files over (they
// are not passed on to processes this one starts) and removes the
// environment marker; call it once.
func Current() (*Child, error) {
	if os.Getenv(envMarker) != "1" {
		return nil, nil
	}
	os.Unsetenv(envMarker)
	lf := os.NewFile(fdListener, "listener")
	ln, err := net.FileListener(lf) // a duplicate, closed on exec
	lf.Close()
	if err != nil {
		return nil, fmt.Errorf("zealgo: supervised: the inherited listener: %w", err)
	}
	syscall.CloseOnExec(fdStatus)
	syscall.CloseOnExec(fdControl)
	return newChild(ln, os.NewFile(fdStatus, "supervisor-status"), os.NewFile(fdControl, "supervisor-control")), nil
}
