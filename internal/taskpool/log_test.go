package taskpool

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/internal/testutil"
)

// TestWorkerLog: a worker's JSON records keep their level, message and
// attributes, with the worker's slot and pid added, also when a record
// arrives in pieces; any other line is a warning; records below the
// server's level are dropped.
func TestWorkerLog(t *testing.T) {
	buf := &testutil.Buffer{}
	w := &workerLog{log: slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo})), slot: 3}
	w.pid.Store(77)
	for _, part := range []string{
		`{"time":"2026-01-01T00:00:00Z","level":"ERROR","msg":"task panic","id":5,`,
		`"file":"task/x.go"}` + "\n" + `{"level":"DEBUG","msg":"hidden"}` + "\n",
		"panic: runtime error\r\n\n",
		`{"level":"WARN+2","msg":"odd level"}` + "\n",
		"no newline yet",
	} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`level=ERROR msg="task panic" id=5 file=task/x.go worker=3 pid=77`,
		`level=WARN msg="panic: runtime error" worker=3 pid=77`,
		`level=WARN+2 msg="odd level" worker=3 pid=77`,
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), buf)
	}
	for i, l := range lines {
		if _, rest, _ := strings.Cut(l, " "); rest != want[i] {
			t.Errorf("line %d: %q, want %q", i, rest, want[i])
		}
	}
}

// TestWorkerLogNumbers: numbers keep their digits, as large task ids
// need.
func TestWorkerLogNumbers(t *testing.T) {
	buf := &testutil.Buffer{}
	w := &workerLog{log: slog.New(slog.NewTextHandler(buf, nil)), slot: 0}
	if _, err := w.Write([]byte(`{"level":"INFO","msg":"m","task_id":1838539510281217,"f":0.5}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "task_id=1838539510281217 f=0.5 ") {
		t.Errorf("record: %s", buf)
	}
}
