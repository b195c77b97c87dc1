package logbuf

import (
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zealgo/zealgo/internal/jsonenc"
)

// Direct is the short way into a Bulk logger for a caller that logs one
// kind of record many times (an access log): the caller formats its record
// straight into bytes, in the logger's format, with no slog.Record, no
// attribute values and no allocation. The bytes are those the logger's
// slog handler writes for the same record: same keys, same order, same
// quoting and escaping.
type Direct struct {
	w     *Writer
	json  bool
	level slog.Leveler
	// second is the time of the last record, to the second, formatted.
	second atomic.Pointer[second]
}

// DirectOf returns the Direct of h when h is the handler of a Bulk
// logger made by New (not one derived from it by With or WithGroup), and
// nil for any other handler.
func DirectOf(h slog.Handler) *Direct {
	if b, ok := h.(bulkHandler); ok {
		return b.direct
	}
	return nil
}

// Enabled reports whether records at level are written.
func (d *Direct) Enabled(level slog.Level) bool { return level >= d.level.Level() }

// bulkHandler is the handler of a Bulk logger: its records are made by
// slog as usual, and DirectOf finds its Direct. With and WithGroup give
// the plain handler's, which carries no Direct.
type bulkHandler struct {
	slog.Handler
	direct *Direct
}

// Key is an attribute's key, encoded once for either format, with the
// separator before it: make keys once (NewKey), use them for every
// record.
type Key struct{ json, text string }

// NewKey returns the key name.
func NewKey(name string) Key {
	return Key{json: string(append(jsonenc.Slog.Append([]byte(`,"`), name), `":`...)),
		text: string(append(appendTextString([]byte(" "), name), '='))}
}

// Record is a record being formatted: Begin it, add its attributes in
// order, End it. It is not safe for concurrent use.
type Record struct {
	buf  []byte
	json bool
	w    *Writer
}

// maxPooledRecord is the largest buffer a Record keeps for reuse.
const maxPooledRecord = 4 << 10

var recordPool = sync.Pool{New: func() any { return &Record{buf: make([]byte, 0, 512)} }}

// Begin starts a record made at t (the time is left out when t is zero,
// as slog does), at level, with message msg.
func (d *Direct) Begin(t time.Time, level slog.Level, msg string) *Record {
	r := recordPool.Get().(*Record)
	r.buf, r.json, r.w = r.buf[:0], d.json, d.w
	b := r.buf
	switch {
	case d.json && t.IsZero():
		b = append(b, `{"level":"`...)
	case d.json:
		b = append(d.appendTime(append(b, `{"time":"`...), t), `","level":"`...)
	case t.IsZero():
		b = append(b, "level="...)
	default:
		b = append(d.appendTime(append(b, "time="...), t), " level="...)
	}
	if d.json {
		b = append(jsonenc.Slog.Append(b, level.String()), `","msg":"`...)
		b = append(jsonenc.Slog.Append(b, msg), '"')
	} else {
		b = append(appendTextString(b, level.String()), " msg="...)
		b = appendTextString(b, msg)
	}
	r.buf = b
	return r
}

// String adds a string attribute.
func (r *Record) String(k Key, v string) {
	if r.json {
		r.buf = append(jsonenc.Slog.Append(append(append(r.buf, k.json...), '"'), v), '"')
	} else {
		r.buf = appendTextString(append(r.buf, k.text...), v)
	}
}

// Int adds an integer attribute.
func (r *Record) Int(k Key, v int64) {
	r.buf = strconv.AppendInt(r.key(k), v, 10)
}

// Duration adds a duration attribute: nanoseconds in JSON, as
// time.Duration.String writes it in text.
func (r *Record) Duration(k Key, d time.Duration) {
	if r.json {
		r.buf = strconv.AppendInt(append(r.buf, k.json...), int64(d), 10)
	} else {
		r.buf = appendDuration(append(r.buf, k.text...), d)
	}
}

func (r *Record) key(k Key) []byte {
	if r.json {
		return append(r.buf, k.json...)
	}
	return append(r.buf, k.text...)
}

// End writes the record to the logger's buffer; r is not to be used
// after.
func (r *Record) End() error {
	if r.json {
		r.buf = append(r.buf, '}')
	}
	r.buf = append(r.buf, '\n')
	_, err := r.w.Write(r.buf)
	r.w = nil
	if cap(r.buf) <= maxPooledRecord {
		recordPool.Put(r)
	}
	return err
}
