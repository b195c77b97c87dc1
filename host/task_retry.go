package host

import (
	"fmt"
	"path/filepath"
	"reflect"
	"time"

	"github.com/zealgo/zealgo/internal/jstask"
	"github.com/zealgo/zealgo/interp"
)

// TaskRetry is what a task file may declare as var retry: the attempts,
// backoff and time limit of its tasks on NATS JetStream. They override
// the serve flags' (TaskLimits: --task-attempts, --task-backoff,
// --task-timeout), and a Task's own fields override them; a zero field
// leaves the setting to the next level.
//
//	var retry = host.TaskRetry{Attempts: 3, Backoff: 2 * time.Second, Timeout: time.Minute}
type TaskRetry struct {
	// Attempts is how many times a task that fails (an error, a panic,
	// its time limit) runs before it is given up to the dead letters.
	Attempts int
	// Backoff is the pause before the second run, doubled at each
	// further one.
	Backoff time.Duration
	// Timeout bounds one run: the task's context is cancelled then.
	Timeout time.Duration
}

// retryVar is the name of a task file's TaskRetry declaration.
const retryVar = "retry"

// taskRetry reads the file's var retry, if it declares one (a task file
// named retry.go holds its func there, no TaskRetry).
func taskRetry(prog fileVars, base string) (jstask.Limits, error) {
	if base == retryVar {
		return jstask.Limits{}, nil
	}
	v, ok := prog.Var(retryVar)
	if !ok {
		return jstask.Limits{}, nil
	}
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	r, ok := v.Interface().(TaskRetry)
	switch {
	case !ok:
		return jstask.Limits{}, fileErr(prog, retryVar, "var retry must be a host.TaskRetry, not %s", v.Type())
	case r.Attempts < 0 || r.Backoff < 0 || r.Timeout < 0:
		return jstask.Limits{}, fileErr(prog, retryVar, "var retry: attempts, backoff and timeout must not be negative")
	}
	return jstask.Limits{Attempts: r.Attempts, Backoff: r.Backoff, Timeout: r.Timeout}, nil
}

// fileErr is an error at the declaration of name in the file.
func fileErr(prog fileVars, name, format string, args ...any) error {
	p := prog.Position(name)
	return &interp.Error{File: prog.rel(), Line: p.Line, Col: p.Column, Msg: fmt.Sprintf(format, args...)}
}

// TaskLimits returns the limits task/<task>.go declares (var retry): the
// JetStream worker applies them (taskpool.Limiter). A file that does not
// load declares none.
func (ws *workerSide) TaskLimits(task string) jstask.Limits {
	if !validName(task) {
		return jstask.Limits{}
	}
	tf, err := ws.cache.Get(filepath.Join(ws.a.dirs.task, task+".go"))
	if err != nil {
		return jstask.Limits{}
	}
	return tf.limits
}
