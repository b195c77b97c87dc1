package taskpool

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
)

// workerLog forwards a worker's standard error to the server's log: the
// worker logs JSON records, which keep their level and attributes; any
// other line (a crash report, a stray print) is logged as a warning.
type workerLog struct {
	log  *slog.Logger
	slot int
	pid  atomic.Int64
	mu   sync.Mutex
	buf  []byte
}

func (w *workerLog) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			if len(w.buf) > 64<<10 {
				w.line(w.buf)
				w.buf = w.buf[:0]
			}
			return len(b), nil
		}
		w.line(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

func (w *workerLog) line(b []byte) {
	b = bytes.TrimRight(b, "\r")
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	ctx := context.Background()
	src := []any{"worker", w.slot, "pid", w.pid.Load()}
	level, msg, attrs, ok := parseLogRecord(b)
	if !ok {
		w.log.Warn(string(b), src...)
		return
	}
	if w.log.Enabled(ctx, level) {
		w.log.Log(ctx, level, msg, append(attrs, src...)...)
	}
}

// parseLogRecord reads a record of slog's JSON handler, keeping the order
// of its attributes and the digits of its numbers (a task id over 2^53
// stays exact).
func parseLogRecord(b []byte) (level slog.Level, msg string, attrs []any, ok bool) {
	if b[0] != '{' || !json.Valid(b) {
		return 0, "", nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return 0, "", nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, "", nil, false
		}
		key, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return 0, "", nil, false
		}
		switch key {
		case slog.TimeKey:
		case slog.LevelKey:
			s, _ := v.(string)
			if level.UnmarshalText([]byte(s)) != nil {
				level = slog.LevelInfo
			}
		case slog.MessageKey:
			msg, _ = v.(string)
		default:
			attrs = append(attrs, key, v)
		}
	}
	return level, msg, attrs, true
}
