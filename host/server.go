package host

import (
	"errors"
	"net/http"
)

// ErrNoTaskWorkers is returned by Server.Task when the application runs no
// task workers; the task is dropped.
var ErrNoTaskWorkers = errors.New("zealgo: no task workers")

// Task is a unit of background work: the task file to run, as
// "/task/<name>", and the positional arguments of its func.
type Task struct {
	Handler string
	Args    []any
}

// Server is the running server handle (the spec's $server), reached
// through App.Server.
type Server struct {
	app  *App
	http *http.Server
}

// Addr returns the address the server listens on, or "" before it starts.
func (s *Server) Addr() string {
	if s == nil || s.http == nil {
		return ""
	}
	return s.http.Addr
}

// Task dispatches t to a task worker and returns its id. The task's
// result reaches the application's OnTaskFinish callback. With no task
// workers it returns ErrNoTaskWorkers and does nothing else.
func (s *Server) Task(t Task) (int64, error) {
	return 0, ErrNoTaskWorkers
}
