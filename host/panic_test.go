package host_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// TestTaskPanicRecord: a task that panics, in a real worker process, is
// one record in the server log with the task id, the file and the frames
// with their lines (the panic on line 9, the call on line 14), and nothing
// of the interpreter.
func TestTaskPanicRecord(t *testing.T) {
	ta := newTaskApp(t, map[string]string{
		"task/crash.go": `//go:build ignore

package main

import "context"

func store(m map[string]int, k string) {
	n := len(k)
	m[k] = n
}

var crash = func(ctx context.Context, k string) any {
	var m map[string]int
	store(m, k)
	return k
}
`,
	}, 1, false)
	id, err := ta.app.Server().Task(host.Task{Handler: "/task/crash", Args: []any{"key"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := ta.sink.wait(t, id); !errors.Is(f.err, host.ErrTaskPanicked) {
		t.Fatalf("task error %v, want ErrTaskPanicked", f.err)
	}
	want := fmt.Sprintf(`level=ERROR msg="task panic" id=%d file=task/crash.go panic="assignment to entry in nil map" `+
		`stack="[task/crash.go:9 store task/crash.go:14 crash]"`, id)
	testutil.WaitFor(t, 10*time.Second, "the task panic in the server log", func() bool {
		return strings.Contains(ta.logs.String(), want)
	})
	if n := strings.Count(ta.logs.String(), "task/crash.go:9"); n != 1 {
		t.Errorf("the panic's line is in %d places of the log, want the one record:\n%s", n, ta.logs)
	}
	for _, bad := range []string{"github.com/traefik", "reflect.", "runtime.", "panic: main."} {
		if strings.Contains(ta.logs.String(), bad) {
			t.Errorf("the log has %q:\n%s", bad, ta.logs)
		}
	}
}
