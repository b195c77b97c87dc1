package host

import (
	"fmt"
	"reflect"
	"time"

	"github.com/zealgo/zealgo/internal/jstask"
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

// taskRetry reads v, a task file's var retry (ok: it declares one), and
// returns its limits, or what is wrong with it.
func taskRetry(v reflect.Value, ok bool) (jstask.Limits, string) {
	if !ok {
		return jstask.Limits{}, ""
	}
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	r, ok := v.Interface().(TaskRetry)
	switch {
	case !ok:
		return jstask.Limits{}, fmt.Sprintf("var retry must be a host.TaskRetry, not %s", v.Type())
	case r.Attempts < 0 || r.Backoff < 0 || r.Timeout < 0:
		return jstask.Limits{}, "var retry: attempts, backoff and timeout must not be negative"
	}
	return jstask.Limits{Attempts: r.Attempts, Backoff: r.Backoff, Timeout: r.Timeout}, ""
}
