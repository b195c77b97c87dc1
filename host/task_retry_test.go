package host_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
)

// retryFiles: flaky fails until its third run and declares three
// attempts (var retry); plain fails the same way and declares nothing;
// wait waits for its context or 30 s; badretry declares a retry of the
// wrong type.
var retryFiles = map[string]string{
	"task/flaky.go": taskFile("flaky", "\"errors\"\n\t\"time\"\n\n\t\"github.com/zealgo/zealgo/host\"", `func(ti *host.TaskInfo) (any, error) {
	if ti.Delivery < 3 {
		return nil, errors.New("not yet")
	}
	return ti.Delivery, nil
}

var retry = host.TaskRetry{Attempts: 3, Backoff: 10 * time.Millisecond}`),
	"task/plain.go": taskFile("plain", "\"errors\"\n\n\t\"github.com/zealgo/zealgo/host\"", `func(ti *host.TaskInfo) (any, error) {
	if ti.Delivery < 3 {
		return nil, errors.New("not yet")
	}
	return ti.Delivery, nil
}`),
	"task/wait.go": taskFile("wait", "\"context\"\n\t\"time\"", `func(ctx context.Context) (any, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(30 * time.Second):
		return "slept", nil
	}
}`),
	"task/badretry.go": taskFile("badretry", "", `func() any { return 1 }

var retry = 3`),
}

// TestTaskNATSRetryPerFileAndTask: on the embedded NATS server with the
// default limits (one attempt, no time limit), a task file's var retry
// gives its tasks three attempts; a Task's own Attempts overrides the
// file's, and gives a file without one its attempts; a Task's Timeout
// bounds its run; a retry of the wrong type is a load error that says so.
func TestTaskNATSRetryPerFileAndTask(t *testing.T) {
	t.Parallel()
	ta := newTaskApp(t, retryFiles, 1, true, natsOpts(host.NATSEmbedded))
	defer func() {
		if t.Failed() {
			t.Log(ta.logs)
		}
	}()
	dispatch := func(task host.Task) taskFinish {
		t.Helper()
		id, err := ta.app.Server().Task(task)
		if err != nil {
			t.Fatalf("Task(%+v): %v", task, err)
		}
		return ta.sink.wait(t, id)
	}
	if f := dispatch(host.Task{Handler: "/task/flaky"}); f.err != nil || toJSON(t, f.result) != "3" {
		t.Errorf("flaky with its file's three attempts: %v %v, want 3 (its third run)", f.result, f.err)
	}
	if f := dispatch(host.Task{Handler: "/task/flaky", Attempts: 1}); !errors.Is(f.err, host.ErrTaskFailed) {
		t.Errorf("flaky with Attempts 1: %v %v, want ErrTaskFailed", f.result, f.err)
	}
	if f := dispatch(host.Task{Handler: "/task/plain"}); !errors.Is(f.err, host.ErrTaskFailed) {
		t.Errorf("plain, one attempt by default: %v %v, want ErrTaskFailed", f.result, f.err)
	}
	if f := dispatch(host.Task{Handler: "/task/plain", Attempts: 3, Backoff: 10 * time.Millisecond}); f.err != nil || toJSON(t, f.result) != "3" {
		t.Errorf("plain with Attempts 3: %v %v, want 3", f.result, f.err)
	}
	began := time.Now()
	if f := dispatch(host.Task{Handler: "/task/wait", Timeout: 300 * time.Millisecond}); !errors.Is(f.err, host.ErrTaskTimeout) {
		t.Errorf("wait with Timeout 300ms: %v %v, want ErrTaskTimeout", f.result, f.err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("the timed-out task ended after %v", d)
	}
	f := dispatch(host.Task{Handler: "/task/badretry"})
	if !errors.Is(f.err, host.ErrTaskLoad) || !strings.Contains(f.err.Error(), "var retry must be a host.TaskRetry, not int") {
		t.Errorf("badretry: %v %v, want ErrTaskLoad naming var retry", f.result, f.err)
	}
}
