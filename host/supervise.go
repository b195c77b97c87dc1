package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/zealgo/zealgo/internal/supervisor"
)

// Crash isolation. Through Main, `serve` runs the application in a child
// process of the same program under a small supervisor
// (internal/supervisor), which holds the listening socket: a child that
// dies (a stack overflow, memory exhausted, a fatal runtime error) is
// replaced at once while connections wait in the socket's backlog, and a
// child with a handler running past its time limit (exectime.go) is
// replaced by a fresh one while it drains. `serve --supervise=false`
// serves in-process, as App.Run, Handler and Serve always do.

// childMaxStack bounds a goroutine's stack in a supervised child (Go's
// default is 1 GB): an interpreted recursion about 100,000 calls deep
// ends the child in well under a second instead of after a gigabyte.
const childMaxStack = 128 << 20

// superviseState is what an App keeps for supervision.
type superviseState struct {
	fromMain bool          // Main runs the command line: serve may supervise
	enabled  bool          // serve --supervise
	child    any           // *supervisor.Child when this process is a supervised child; any: see childOf
	late     atomic.Int64  // handlers running past their limit
	closing  atomic.Bool   // told to stop: responses say Connection: close
	tiered   bool          // serve --tiered (tier.go)
	settle   time.Duration // serve --tier-settle
}

// childOf returns the supervised child this process is, or nil
// (superviseState.child is an any: see rtOf).
func childOf(s *superviseState) *supervisor.Child {
	c, _ := s.child.(*supervisor.Child)
	return c
}

// serveCommand is the last step of serve: as a supervised child, as the
// supervisor of one, or in-process.
func serveCommand(ctx context.Context, a *App, args []string, stdout, stderr io.Writer) int {
	child, err := supervisor.Current()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	switch {
	case child != nil:
		return serveChild(ctx, a, child, stderr)
	case a.sup.fromMain && a.sup.enabled && supervisor.Supported:
		return supervise(ctx, a, args, stdout, stderr)
	}
	a.Logger().Info("zealgo serving", "addr", a.cfg.Addr, "root", a.cfg.Root)
	if err := a.ListenAndServe(ctx); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	a.Logger().Info("zealgo stopped")
	return 0
}

// supervise listens and runs this program's serve with the same
// arguments in a child process until ctx is done (SIGINT or SIGTERM,
// which the child receives too: it drains and exits).
func supervise(ctx context.Context, a *App, args []string, stdout, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "zealgo: supervisor: %v\n", err)
		return 1
	}
	// The metrics listener first: once the address accepts connections,
	// so does the metrics address.
	extra, err := superviseMetrics(&a.cfg)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		for _, x := range extra {
			x.Close()
		}
		fmt.Fprintf(stderr, "zealgo: listen: %v\n", err)
		return 1
	}
	nats, env, err := superviseNATS(&a.cfg, func() (*slog.Logger, error) { err := a.prepare(); return a.log, err })
	if err != nil {
		ln.Close()
		for _, x := range extra {
			x.Close()
		}
		fmt.Fprintln(stderr, err)
		return 1
	}
	if nats != nil {
		defer nats.Shutdown() // after the last child
	}
	a.Logger().Info("zealgo supervisor listening", "addr", a.cfg.Addr, "pid", os.Getpid())
	o := supervisor.Options{
		Listener:  ln,
		Extra:     extra,
		Logger:    a.Logger(),
		StopGrace: a.cfg.Ops.DrainDelay + a.cfg.ShutdownTimeout + 5*time.Second,
		Command: func() *exec.Cmd {
			cmd := exec.Command(exe, append([]string{"serve"}, args...)...)
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if env != nil {
				cmd.Env = append(os.Environ(), env...)
			}
			return cmd
		},
	}
	if a.sup.tiered {
		ctx = tierOptions(ctx, a, exe, &o)
	}
	err = supervisor.Run(ctx, o)
	var ee *supervisor.ExitError
	switch {
	case errors.As(err, &ee): // the child said why
		return ee.Code
	case err != nil:
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// superviseMetrics listens on the metrics address, if there is one: the
// supervisor holds the socket, as it holds the serving one, and passes it
// to each child (Child.Extra), so that a successor serves it while the
// child it replaces still does (a switch of tiered serve, a replacement).
func superviseMetrics(cfg *Config) ([]net.Listener, error) {
	if cfg.Ops.MetricsAddr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.Ops.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("zealgo: metrics listener: %w", err)
	}
	return []net.Listener{ln}, nil
}

// tierOptions makes the supervisor's children those of tiered serve
// (tier.go), when it can run, and starts its builder.
func tierOptions(ctx context.Context, a *App, exe string, o *supervisor.Options) context.Context {
	if isCompiled() { // a binary of zealgo build serves what it compiled: it is the native tier
		return ctx
	}
	b := newTierBuilder(a, exe)
	if b == nil {
		return ctx
	}
	command := o.Command
	o.Command = func() *exec.Cmd {
		cmd := command()
		path, env := b.command()
		cmd.Path, cmd.Args[0] = path, path
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, env)
		return cmd
	}
	o.Switch, o.OnNote = b.switches, b.note
	go b.run(ctx)
	return ctx
}

// childCloseGrace is how long a supervised child told to stop serves on
// with keep-alives off before it closes its listener and idle connections.
const childCloseGrace = 150 * time.Millisecond

// closeGrace serves on for childCloseGrace with each response saying
// Connection: close (connClose), so that few idle connections remain when
// the server closes them: a client sending its next request on one at
// that instant sees it fail, which HTTP/1.1 cannot tell from a request the
// server saw. The successor (a switch of tiered serve, a replacement) or
// the socket's backlog takes the new connections.
func (s *superviseState) closeGrace() {
	s.closing.Store(true)
	time.Sleep(childCloseGrace)
}

// connClose makes h's responses say Connection: close once the process
// is told to stop.
func (s *superviseState) connClose(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.closing.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// serveChild serves the supervisor's socket until ctx is done (SIGTERM
// from the supervisor) or the supervisor is gone.
func serveChild(ctx context.Context, a *App, c *supervisor.Child, stderr io.Writer) int {
	if err := supervisor.LimitResources(childMaxStack, a.cfg.MemoryLimit); err != nil {
		a.Logger().Warn("zealgo: resource limits", "err", err)
	}
	a.sup.child = c
	if x := c.Extra(); len(x) > 0 && a.cfg.Ops.MetricsAddr != "" {
		rtOf(a).ops.metricsSrv.inherited = x[0] // superviseMetrics
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.Done():
			a.Logger().Warn("the supervisor is gone: stopping")
			cancel()
		case <-ctx.Done():
		}
	}()
	if _, err := a.Handler(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	a.Logger().Info("zealgo serving", "addr", a.cfg.Addr, "root", a.cfg.Root, "pid", os.Getpid())
	c.Ready()
	if err := a.Serve(ctx, c.Listener()); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	a.Logger().Info("zealgo stopped")
	return 0
}
