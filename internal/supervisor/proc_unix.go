//go:build unix

package supervisor

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
)

// Supported reports whether Run can supervise children on this system.
const Supported = true

// sysProcAttr puts a child in a process group of its own, so that a
// Ctrl-C in the terminal reaches the supervisor alone, which then stops
// its children in order.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// listenerFile returns a duplicate of ln's descriptor to pass to children.
// Not ln.File: the *os.File it returns puts the socket in blocking mode
// each time its Fd is read, as os/exec does when it starts a child, and
// the mode belongs to the socket, shared by every process that holds it:
// a serving child would then block in accept(2) where Close cannot wake
// it, and hang in its shutdown. A descriptor given to os.NewFile while
// nonblocking stays nonblocking.
func listenerFile(ln net.Listener) (*os.File, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("zealgo: supervisor: a %T cannot be passed to a child", ln)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("zealgo: supervisor: %w", err)
	}
	var fd int
	var dupErr error
	if err := raw.Control(func(s uintptr) {
		syscall.ForkLock.RLock() // no child inherits it before it is close-on-exec
		defer syscall.ForkLock.RUnlock()
		if fd, dupErr = syscall.Dup(int(s)); dupErr == nil {
			syscall.CloseOnExec(fd)
		}
	}); err != nil {
		return nil, fmt.Errorf("zealgo: supervisor: %w", err)
	}
	if dupErr != nil {
		return nil, fmt.Errorf("zealgo: supervisor: dup: %w", dupErr)
	}
	return os.NewFile(uintptr(fd), "listener"), nil
}

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
	n, _ := strconv.Atoi(os.Getenv(envExtra))
	os.Unsetenv(envExtra)
	ln, err := inheritListener(fdListener)
	if err != nil {
		return nil, err
	}
	var extra []net.Listener
	for i := range n {
		x, err := inheritListener(fdControl + 1 + i)
		if err != nil {
			return nil, err
		}
		extra = append(extra, x)
	}
	syscall.CloseOnExec(fdStatus)
	syscall.CloseOnExec(fdControl)
	c := newChild(ln, os.NewFile(fdStatus, "supervisor-status"), os.NewFile(fdControl, "supervisor-control"))
	c.extra = extra
	return c, nil
}

// inheritListener returns the listener of the inherited descriptor fd.
func inheritListener(fd int) (net.Listener, error) {
	// Go's sockets are nonblocking; making sure of it lets os.NewFile keep
	// it so, instead of net.FileListener's read of Fd putting the shared
	// socket in blocking mode (see listenerFile).
	if err := syscall.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("zealgo: supervised: the inherited listener: %w", err)
	}
	lf := os.NewFile(uintptr(fd), "listener")
	ln, err := net.FileListener(lf) // a duplicate, closed on exec
	lf.Close()
	if err != nil {
		return nil, fmt.Errorf("zealgo: supervised: the inherited listener: %w", err)
	}
	return ln, nil
}
