// Package logbuf makes the log of a server that logs every request: the
// access log's records, one a request, go through a buffer written a few
// times a second instead of costing a system call each; every other
// record is written at once, after what the buffer held, so that the
// order holds and nothing but access records waits.
package logbuf

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// FlushInterval is how long a record may wait in the buffer.
const FlushInterval = 100 * time.Millisecond

// maxBuffer is the size at which the buffer is written at once.
const maxBuffer = 64 << 10

// Writer buffers what is written to it and writes it to the underlying
// writer within FlushInterval, when the buffer fills, on Flush and on
// Close. It is safe for concurrent use; each Write reaches the underlying
// writer whole, in order.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	timer  *time.Timer
	armed  bool
	closed bool
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	b := &Writer{w: w}
	b.timer = time.AfterFunc(time.Hour, func() { _ = b.Flush() })
	b.timer.Stop()
	return b
}

// Write adds p to the buffer; after Close it writes p at once.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= maxBuffer {
		return len(p), b.flushLocked()
	}
	if !b.armed {
		b.armed = true
		b.timer.Reset(FlushInterval)
	}
	return len(p), nil
}

// Flush writes what the buffer holds.
func (b *Writer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *Writer) flushLocked() error {
	b.armed = false
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	if cap(b.buf) > 4*maxBuffer {
		b.buf = nil
	} else {
		b.buf = b.buf[:0]
	}
	return err
}

// Close flushes the buffer; later writes go through unbuffered.
func (b *Writer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.timer.Stop()
	b.closed = true
	return b.flushLocked()
}

// Logs are two loggers writing the same format to one Writer: Main
// writes each record at once (with whatever Bulk left in the buffer
// before it, so the order holds), Bulk leaves its records in the buffer
// (an access log's, one a request; DirectOf its handler formats them
// without slog).
type Logs struct {
	Main, Bulk *slog.Logger
	w          *Writer
}

// New returns the loggers of records at level and above, in format
// ("text" or "json"), on w.
func New(w io.Writer, format string, level slog.Leveler) (*Logs, error) {
	bw := NewWriter(w)
	if level == nil {
		level = slog.LevelInfo // as slog.HandlerOptions
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch format {
	case "", "text":
		h = slog.NewTextHandler(bw, opts)
	case "json":
		h = slog.NewJSONHandler(bw, opts)
	default:
		return nil, fmt.Errorf("zealgo: log format %q: want text or json", format)
	}
	bulk := bulkHandler{h, &Direct{w: bw, json: format == "json", level: level}}
	return &Logs{Main: slog.New(flushHandler{h, bw}), Bulk: slog.New(bulk), w: bw}, nil
}

// Close writes what the buffer holds; later records are written at once.
func (l *Logs) Close() error { return l.w.Close() }

// flushHandler flushes the Writer after each record.
type flushHandler struct {
	slog.Handler
	w *Writer
}

func (h flushHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if ferr := h.w.Flush(); err == nil {
		err = ferr
	}
	return err
}

func (h flushHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushHandler{h.Handler.WithAttrs(attrs), h.w}
}

func (h flushHandler) WithGroup(name string) slog.Handler {
	return flushHandler{h.Handler.WithGroup(name), h.w}
}
