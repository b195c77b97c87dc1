package supervisor

import (
	"io"
	"net"
	"os"
	"strings"
	"sync"
)

// Child is a supervised process's link to its supervisor.
type Child struct {
	ln    net.Listener
	extra []net.Listener // Options.Extra
	done  chan struct{}

	mu       sync.Mutex
	status   *os.File
	replaced bool // Replace was sent
}

// newChild links a child to its supervisor: status carries its reports,
// and the end of control means the supervisor is gone.
func newChild(ln net.Listener, status, control *os.File) *Child {
	c := &Child{ln: ln, status: status, done: make(chan struct{})}
	go func() {
		_, _ = io.Copy(io.Discard, control)
		control.Close()
		close(c.done)
	}()
	return c
}

// Listener returns the socket to serve, which the supervisor keeps open.
func (c *Child) Listener() net.Listener { return c.ln }

// Extra returns the further sockets to serve (Options.Extra, in order),
// which the supervisor keeps open.
func (c *Child) Extra() []net.Listener { return c.extra }

// Done is closed when the supervisor is gone (it died, or was killed): the
// child should then stop. A supervisor that is alive asks its child to
// stop with SIGTERM.
func (c *Child) Done() <-chan struct{} { return c.done }

// Ready tells the supervisor that the child serves. A replacement takes
// over from the child it replaces only then.
func (c *Child) Ready() { c.write(msgReady) }

// Replace asks the supervisor for a successor: it starts a new child on
// the same socket and, once that one is ready, tells this one to stop
// (SIGTERM). Only the first call counts; reason is logged.
func (c *Child) Replace(reason string) {
	c.mu.Lock()
	first := !c.replaced
	c.replaced = true
	c.mu.Unlock()
	if first {
		c.write(msgReplace + " " + strings.Join(strings.Fields(reason), " "))
	}
}

// Note sends the supervisor a line of text (Options.OnNote), e.g. that a
// file needs a native build.
func (c *Child) Note(note string) { c.write(msgNote + " " + strings.Join(strings.Fields(note), " ")) }

// write sends a line to the supervisor; a supervisor that is gone is not
// an error of the child's.
func (c *Child) write(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.status.WriteString(line + "\n")
}
