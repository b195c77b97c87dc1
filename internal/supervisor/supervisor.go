// Package supervisor runs a server program in a child process and keeps
// its listening socket open across children: when the child dies, a new
// one starts at once on the same socket, so that clients see no refused
// connection (connections wait in the socket's backlog while it starts).
// A child that asks to be replaced (Child.Replace: a request handler runs
// on past its time limit) gets a successor on the same socket; once the
// successor is ready, the old child is told to stop (SIGTERM), drains its
// other requests and exits, and is killed if it has not exited within
// Options.StopGrace. Children that keep dying soon after they start are
// restarted after a delay that doubles up to a cap, and each delay is
// logged.
//
// The supervisor and its child are the same program: Run starts
// Options.Command with an environment marker and three inherited files
// (the listener, a status pipe to the supervisor, a control pipe from
// it), and in the child Current returns them. When the supervisor's
// context is done (SIGINT or SIGTERM to it), it sends SIGTERM to its
// children, waits for their graceful shutdown and returns; if the
// supervisor itself dies, its children see their control pipe end and
// stop too.
//
// As in hashicorp/go-plugin, the engine is portable and the process
// handling is split into files per OS: only unix systems pass files to a
// child, so elsewhere Supported is false and Run returns ErrUnsupported;
// the caller then serves in-process.
package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"
)

// envMarker, set to "1", marks a process started by Run.
const envMarker = "ZEALGO_SUPERVISED"

// envExtra is the number of Options.Extra a child inherits.
const envExtra = "ZEALGO_SUPERVISED_EXTRA"

// The lines a child writes on its status pipe.
const (
	msgReady   = "ready"
	msgReplace = "replace"
	msgNote    = "note"
)

// ErrUnsupported is returned by Run where a child cannot inherit the
// listener (systems other than unix).
var ErrUnsupported = errors.New("zealgo: supervisor: not supported on this system")

// ExitError is returned by Run when its first child exits before it is
// ready: the program cannot start (a bad directory, a database that does
// not open), and restarting it would not help.
type ExitError struct {
	Code   int    // the child's exit status, or 1 when a signal ended it
	Status string // how it ended, as os/exec describes it
}

func (e *ExitError) Error() string {
	return "zealgo: supervisor: the server process ended before it was ready (" + e.Status + ")"
}

// Options configures Run.
type Options struct {
	// Listener is the socket the children serve: a *net.TCPListener or
	// *net.UnixListener. Run keeps it open across children and closes it
	// when it returns.
	Listener net.Listener
	// Extra are further sockets the children serve (a metrics listener),
	// kept open across children as Listener is: two children (the one
	// stopping, its successor) serve them at once. Run closes them when it
	// returns; a child finds them with Child.Extra, in this order.
	Extra []net.Listener
	// Command returns the command of a new child: this program, which
	// calls Current and serves the listener it returns. Run adds the
	// inherited files, the environment marker and its own process
	// attributes.
	Command func() *exec.Cmd
	// Logger receives the supervisor's log. Default slog.Default().
	Logger *slog.Logger
	// StopGrace bounds how long a child told to stop may take to drain
	// before it is killed. Default 15s.
	StopGrace time.Duration
	// ReadyTimeout bounds how long a child may take to report ready; one
	// that does not is killed. Default 60s.
	ReadyTimeout time.Duration
	// MinBackoff is the delay before restarting a child that died soon
	// after it started, doubled for each such death in a row up to
	// MaxBackoff. Defaults 100ms and 10s.
	MinBackoff, MaxBackoff time.Duration
	// StableAfter is how long a child must have been ready for its death
	// to count as a crash rather than a crash loop: the next child then
	// starts at once. A child that dies before it is ready, or this soon
	// after, is a crash loop: its program fails on start. Short, so that
	// requests that crash a serving child (a deep recursion takes about
	// 0.4s to end it) cannot make the supervisor wait: each such crash
	// costs one restart. Default 250ms.
	StableAfter time.Duration
	// Switch, when it delivers a reason, starts a new child (Command may
	// now return another program, e.g. a new native build of the
	// application), which takes over from the current one once ready, as
	// after Child.Replace.
	Switch <-chan string
	// OnNote, if set, receives what a child sends with Child.Note.
	OnNote func(note string)
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.StopGrace, 15*time.Second)
	def(&o.ReadyTimeout, 60*time.Second)
	def(&o.MinBackoff, 100*time.Millisecond)
	def(&o.MaxBackoff, 10*time.Second)
	def(&o.StableAfter, 250*time.Millisecond)
}

// proc is a child process, as the supervisor sees it.
type proc struct {
	cmd      *exec.Cmd
	pid      int
	ctl      *os.File // the write end of its control pipe; closing it tells the child the supervisor is gone
	started  time.Time
	readyAt  time.Time // zero until it reports ready
	stopping bool      // told to stop: its exit is expected
	kill     *time.Timer
}

type eventKind int

const (
	evReady eventKind = iota
	evReplace
	evReadyTimeout
	evExit
	evNote
)

// event is what a child's goroutines report to the supervisor's loop.
type event struct {
	p    *proc
	kind eventKind
	msg  string // the reason of a replace
	err  error  // how it exited
}

// supervisor is the state of Run; only its loop touches it.
type supervisor struct {
	o      Options
	ln     *os.File
	extra  []*os.File // Options.Extra's duplicates, passed to each child
	events chan event
	quit   chan struct{} // closed when Run returns: late reports are dropped

	live      map[*proc]bool
	current   *proc // the child serving, or starting to
	pending   *proc // a replacement of current, starting
	everReady bool  // some child has been ready: a later death is a crash, not a failure to start
	replace   bool  // current asked to be replaced and no replacement is ready yet
	fails     int   // children in a row that died soon after they started
	restart   *time.Timer
	restartC  <-chan time.Time // nil unless a restart is waiting out its delay
	again     bool             // a switch came while a replacement was starting: one more follows it
}

// Run serves through children of this program until ctx is done, then
// stops them gracefully and returns nil. It returns an *ExitError if the
// first child exits before it is ready, and ErrUnsupported where children
// cannot inherit the listener.
func Run(ctx context.Context, o Options) error {
	if !Supported {
		return ErrUnsupported
	}
	o.defaults()
	defer o.Listener.Close()
	f, err := listenerFile(o.Listener)
	if err != nil {
		return err
	}
	defer f.Close()
	s := &supervisor{o: o, ln: f, events: make(chan event), quit: make(chan struct{}), live: map[*proc]bool{}}
	for _, ln := range o.Extra {
		defer ln.Close()
		ef, err := listenerFile(ln)
		if err != nil {
			return err
		}
		defer ef.Close()
		s.extra = append(s.extra, ef)
	}
	defer close(s.quit)
	return s.loop(ctx)
}

func (s *supervisor) loop(ctx context.Context) error {
	s.current = s.spawn()
	for {
		select {
		case <-ctx.Done():
			s.stopAll()
			return nil
		case ev := <-s.events:
			if err := s.handle(ev); err != nil {
				s.stopAll()
				return err
			}
		case <-s.restartC:
			s.restartC = nil
			s.restarted()
		case reason := <-s.o.Switch:
			s.switchTo(reason)
		}
	}
}

func (s *supervisor) handle(ev event) error {
	p := ev.p
	switch ev.kind {
	case evReady:
		s.ready(p)
	case evReplace:
		s.replaceWanted(p, ev.msg)
	case evReadyTimeout:
		if s.live[p] && p.readyAt.IsZero() && !p.stopping {
			s.o.Logger.Error("supervisor: the server process did not get ready in time; killing it", "pid", p.pid, "timeout", s.o.ReadyTimeout)
			killProcess(p.cmd.Process)
		}
	case evExit:
		return s.exited(p, ev.err)
	case evNote:
		if s.o.OnNote != nil && s.live[p] {
			s.o.OnNote(ev.msg)
		}
	}
	return nil
}

// switchTo starts a new child of Command, which takes over once ready.
func (s *supervisor) switchTo(reason string) {
	if s.current == nil || s.restartC != nil {
		return // the next start runs Command anyway
	}
	if s.pending != nil {
		s.again = true
		return
	}
	s.o.Logger.Info("supervisor: switching to a new server process", "reason", reason)
	s.replace = true
	s.pending = s.spawn()
}

// ready: a child serves. A replacement takes over from the child it
// replaces, which is told to stop.
func (s *supervisor) ready(p *proc) {
	if !s.live[p] {
		return
	}
	p.readyAt = time.Now()
	s.everReady = true
	s.o.Logger.Info("supervisor: server process ready", "pid", p.pid, "after", p.readyAt.Sub(p.started).Round(time.Millisecond))
	if p != s.pending {
		return
	}
	old := s.current
	s.current, s.pending, s.replace = p, nil, false
	if old != nil {
		s.retire(old)
	}
	if s.again {
		s.again = false
		s.replace, s.pending = true, s.spawn()
	}
}

// replaceWanted starts a successor for the current child, which asked for
// one.
func (s *supervisor) replaceWanted(p *proc, reason string) {
	if p != s.current || p.stopping {
		return
	}
	s.o.Logger.Warn("supervisor: the server process asks to be replaced", "pid", p.pid, "reason", reason)
	s.replace = true
	if s.pending == nil && s.restartC == nil {
		s.pending = s.spawn()
	}
}

// exited reaps a child and decides what follows: nothing for a child
// told to stop, a restart (at once or after a delay) for the current one.
func (s *supervisor) exited(p *proc, err error) error {
	delete(s.live, p)
	if p.ctl != nil {
		p.ctl.Close()
	}
	if p.kill != nil {
		p.kill.Stop()
	}
	status := exitStatus(err)
	switch {
	case p.stopping:
		s.o.Logger.Info("supervisor: server process stopped", "pid", p.pid, "status", status)
		return nil
	case p == s.current && !s.everReady:
		code := 1
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		}
		return &ExitError{Code: code, Status: status}
	}
	s.o.Logger.Error("supervisor: server process died", "pid", p.pid, "status", status,
		"ran", time.Since(p.started).Round(time.Millisecond))
	s.count(p)
	switch p {
	case s.pending:
		s.pending = nil
		s.schedule(s.delay())
	case s.current:
		s.current, s.replace = nil, false
		if s.pending != nil {
			s.current, s.pending, s.replace = s.pending, nil, false
			return nil
		}
		s.schedule(s.delay())
	}
	return nil
}

// count records whether p died soon after it started, which makes the
// next start wait.
func (s *supervisor) count(p *proc) {
	if p.readyAt.IsZero() || time.Since(p.readyAt) < s.o.StableAfter {
		s.fails++
	} else {
		s.fails = 0
	}
}

// delay is how long to wait before the next start: none after a child
// that ran well, then MinBackoff doubled for each quick death in a row, up
// to MaxBackoff.
func (s *supervisor) delay() time.Duration {
	if s.fails == 0 {
		return 0
	}
	d := s.o.MinBackoff
	for i := 1; i < s.fails && d < s.o.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.o.MaxBackoff)
}

// schedule starts what is missing (a current child, or a wanted
// replacement) after d.
func (s *supervisor) schedule(d time.Duration) {
	if d == 0 {
		s.restarted()
		return
	}
	s.o.Logger.Warn("supervisor: crash loop: waiting before the next start", "delay", d, "deaths_in_a_row", s.fails)
	if s.restart == nil {
		s.restart = time.NewTimer(d)
	} else {
		s.restart.Reset(d)
	}
	s.restartC = s.restart.C
}

func (s *supervisor) restarted() {
	switch {
	case s.current == nil:
		s.current = s.spawn()
	case s.replace && s.pending == nil:
		s.pending = s.spawn()
	}
}

// retire tells p to stop and arms its kill.
func (s *supervisor) retire(p *proc) {
	if p.stopping {
		return
	}
	p.stopping = true
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	s.o.Logger.Info("supervisor: stopping server process", "pid", p.pid)
	if err := stopProcess(p.cmd.Process); err != nil {
		killProcess(p.cmd.Process)
	}
	proc, log, grace := p.cmd.Process, s.o.Logger, s.o.StopGrace
	p.kill = time.AfterFunc(grace, func() {
		log.Warn("supervisor: server process did not stop in time; killing it", "pid", proc.Pid, "grace", grace)
		killProcess(proc)
	})
}

// stopAll stops every child and waits until they have exited.
func (s *supervisor) stopAll() {
	if s.restart != nil {
		s.restart.Stop()
	}
	for p := range s.live {
		s.retire(p)
	}
	for len(s.live) > 0 {
		if ev := <-s.events; ev.kind == evExit {
			_ = s.exited(ev.p, ev.err)
		}
	}
	s.o.Logger.Info("supervisor: stopped")
}

// spawn starts a child; a child that cannot start is reported as exited.
func (s *supervisor) spawn() *proc {
	p := &proc{started: time.Now()}
	s.live[p] = true
	if err := s.start(p); err != nil {
		go s.send(event{p: p, kind: evExit, err: err})
		return p
	}
	s.o.Logger.Info("supervisor: server process started", "pid", p.pid)
	time.AfterFunc(s.o.ReadyTimeout, func() { s.send(event{p: p, kind: evReadyTimeout}) })
	return p
}

// start starts p's process with the listener and its two pipes.
func (s *supervisor) start(p *proc) error {
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("zealgo: supervisor: %w", err)
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		statusR.Close()
		statusW.Close()
		return fmt.Errorf("zealgo: supervisor: %w", err)
	}
	cmd := s.o.Command()
	cmd.ExtraFiles = append([]*os.File{s.ln, statusW, ctlR}, s.extra...) // fds 3, 4, 5 of the child, then Extra's
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, envMarker+"=1", fmt.Sprintf("%s=%d", envExtra, len(s.extra)))
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	statusW.Close()
	ctlR.Close()
	if err != nil {
		statusR.Close()
		ctlW.Close()
		return fmt.Errorf("zealgo: supervisor: start: %w", err)
	}
	p.cmd, p.pid, p.ctl = cmd, cmd.Process.Pid, ctlW
	statusDone := make(chan struct{})
	go s.readStatus(p, statusR, statusDone)
	go func() {
		err := cmd.Wait()
		select { // report what the child wrote before it died first
		case <-statusDone:
		case <-time.After(time.Second):
		}
		s.send(event{p: p, kind: evExit, err: err})
	}()
	return nil
}

// readStatus turns the lines a child writes into events.
func (s *supervisor) readStatus(p *proc, r *os.File, done chan struct{}) {
	defer close(done)
	defer r.Close()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		switch word, arg, _ := strings.Cut(sc.Text(), " "); word {
		case msgReady:
			s.send(event{p: p, kind: evReady})
		case msgReplace:
			s.send(event{p: p, kind: evReplace, msg: arg})
		case msgNote:
			s.send(event{p: p, kind: evNote, msg: arg})
		}
	}
}

func (s *supervisor) send(ev event) {
	select {
	case s.events <- ev:
	case <-s.quit:
	}
}

// exitStatus describes how a child ended.
func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
