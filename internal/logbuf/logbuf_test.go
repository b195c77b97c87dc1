package logbuf_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/zealgo/zealgo/internal/logbuf"
	"github.com/zealgo/zealgo/internal/testutil"
)

// sink records each write it receives.
type sink struct {
	mu     sync.Mutex
	writes []string
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, string(p))
	return len(p), nil
}

func (s *sink) text() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.writes, ""), len(s.writes)
}

// TestBufferedRecords: bulk records wait in the buffer and reach the
// writer together within the flush interval; a main record goes out at
// once with what came before it; Close flushes.
func TestBufferedRecords(t *testing.T) {
	out := &sink{}
	logs, err := logbuf.New(out, "json", slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		logs.Bulk.Info("request", "n", i)
	}
	logs.Bulk.Debug("below the level")
	if s, _ := out.text(); s != "" {
		t.Fatalf("bulk records written at once: %q", s)
	}
	if !testutil.Poll(10*logbuf.FlushInterval, func() bool { s, _ := out.text(); return strings.Count(s, "\n") == 100 }) {
		t.Fatal("the buffer was not flushed within the interval")
	}
	if _, n := out.text(); n != 1 {
		t.Errorf("100 records in %d writes, want 1", n)
	}
	logs.Bulk.Info("before")
	logs.Main.Info("main")
	s, _ := out.text()
	if !strings.Contains(s, `"msg":"before"`) || !strings.HasSuffix(s, `"msg":"main"}`+"\n") {
		t.Fatalf("a main record did not go out at once after the bulk one: %q", s)
	}
	logs.Bulk.With("k", "v").Info("last")
	if err := logs.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = out.text()
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["msg"] != "last" || last["k"] != "v" {
		t.Fatalf("Close did not flush the last record: %q", lines[len(lines)-1])
	}
	logs.Bulk.Info("after close")
	if s, _ := out.text(); !strings.Contains(s, "after close") {
		t.Error("a record after Close was held back")
	}
	if _, err := logbuf.New(out, "yaml", slog.LevelInfo); err == nil {
		t.Error("an unknown format: no error")
	}
}
