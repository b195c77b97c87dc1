package host

import (
	"fmt"
	"sync"
)

// lifecycle holds the hooks run when the application starts and closes.
type lifecycle struct {
	mu      sync.Mutex
	onStart []func(*App) error
	onStop  []func()
	running bool // the OnStart hooks are running (Provide is allowed)
}

// OnStart registers f to run once when the application starts (the first
// Handler, Serve or serve command), after the command-line flags are
// applied and the root and data directories resolved, before the first
// request: the place to open a database under Config().DataDir. An error
// stops the start-up. Hooks run in registration order. The check and
// routes commands do not start the application and run no hook.
//
// Hooks run in the server and again in each task worker process, so that
// what they open is there for tasks too; a hook that starts background
// work meant to run once (a scheduler, a cleaner) checks IsTaskWorker.
func (a *App) OnStart(f func(*App) error) {
	a.mustConfigure()
	a.reg.lifecycle.mu.Lock()
	defer a.reg.lifecycle.mu.Unlock()
	a.reg.lifecycle.onStart = append(a.reg.lifecycle.onStart, f)
}

// OnStop registers f to run once when the application closes (after a
// graceful shutdown, or Close), in reverse registration order: the place
// to close a database opened by OnStart. A task worker runs the hooks
// too, when it exits.
func (a *App) OnStop(f func()) {
	a.mustConfigure()
	a.reg.lifecycle.mu.Lock()
	defer a.reg.lifecycle.mu.Unlock()
	a.reg.lifecycle.onStop = append(a.reg.lifecycle.onStop, f)
}

func (l *lifecycle) start(a *App) error {
	l.mu.Lock()
	hooks := l.onStart
	l.running = true
	l.mu.Unlock()
	defer l.setRunning(false)
	for i, f := range hooks {
		if err := f(a); err != nil {
			return fmt.Errorf("zealgo: start-up hook %d: %w", i+1, err)
		}
	}
	return nil
}

// stop runs the OnStop hooks, once.
func (l *lifecycle) stop() {
	l.mu.Lock()
	hooks := l.onStop
	l.onStop = nil
	l.mu.Unlock()
	for i := len(hooks) - 1; i >= 0; i-- {
		hooks[i]()
	}
}

// IsTaskWorker reports whether this process is a task worker, started by
// the server to run tasks, rather than the server itself.
func (a *App) IsTaskWorker() bool { return a.worker }
