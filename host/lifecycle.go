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
