package logbuf

import (
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
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

// Record is a record being formatted: Begin it, add its attributes in
// order, End it. It is not safe for concurrent use.
type Record struct {
	buf   []byte
	json  bool
	first bool // no attribute yet: no separator before the next key
	w     *Writer
}

// maxPooledRecord is the largest buffer a Record keeps for reuse.
const maxPooledRecord = 4 << 10

var recordPool = sync.Pool{New: func() any { return &Record{buf: make([]byte, 0, 512)} }}

// Begin starts a record made at t (the time is left out when t is zero,
// as slog does), at level, with message msg.
func (d *Direct) Begin(t time.Time, level slog.Level, msg string) *Record {
	r := recordPool.Get().(*Record)
	r.buf, r.json, r.first, r.w = r.buf[:0], d.json, true, d.w
	if r.json {
		r.buf = append(r.buf, '{')
	}
	if !t.IsZero() {
		r.key(slog.TimeKey)
		t = t.Round(0) // no monotonic reading, as slog
		if r.json {
			r.buf = append(t.AppendFormat(append(r.buf, '"'), time.RFC3339Nano), '"')
		} else {
			r.buf = appendRFC3339Millis(r.buf, t)
		}
	}
	r.String(slog.LevelKey, level.String())
	r.String(slog.MessageKey, msg)
	return r
}

// String adds a string attribute.
func (r *Record) String(key, v string) {
	r.key(key)
	r.str(v)
}

// Int adds an integer attribute.
func (r *Record) Int(key string, v int64) {
	r.key(key)
	r.buf = strconv.AppendInt(r.buf, v, 10)
}

// Duration adds a duration attribute: nanoseconds in JSON, as
// time.Duration.String writes it in text.
func (r *Record) Duration(key string, d time.Duration) {
	r.key(key)
	if r.json {
		r.buf = strconv.AppendInt(r.buf, int64(d), 10)
	} else {
		r.buf = appendDuration(r.buf, d)
	}
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

func (r *Record) key(k string) {
	if !r.first {
		if r.json {
			r.buf = append(r.buf, ',')
		} else {
			r.buf = append(r.buf, ' ')
		}
	}
	r.first = false
	r.str(k)
	if r.json {
		r.buf = append(r.buf, ':')
	} else {
		r.buf = append(r.buf, '=')
	}
}

// str appends s as slog's handler does: a JSON string, or in text bare
// or quoted with strconv.Quote when it needs quoting.
func (r *Record) str(s string) {
	switch {
	case r.json:
		r.buf = append(appendJSONString(append(r.buf, '"'), s), '"')
	case needsQuoting(s):
		r.buf = strconv.AppendQuote(r.buf, s)
	default:
		r.buf = append(r.buf, s...)
	}
}

// jsonSafe tells the ASCII bytes a JSON string holds as they are: all
// but the control characters, '"' and '\'.
func jsonSafe(b byte) bool { return b >= 0x20 && b != '"' && b != '\\' }

const hexDigits = "0123456789abcdef"

// appendJSONString appends s escaped as slog's JSON handler escapes it:
// the short escapes for \n, \r, \t, '"' and '\', \u00XX for the other
// control characters, \ufffd for each byte of invalid UTF-8, and U+2028
// and U+2029 escaped.
func appendJSONString(buf []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if jsonSafe(b) {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch b {
			case '\\', '"':
				buf = append(buf, '\\', b)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			buf = append(append(buf, s[start:i]...), `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			buf = append(append(buf, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(buf, s[start:]...)
}

// needsQuoting is slog's text handler's test: empty, or holding a space,
// '=', '"', a control character, invalid UTF-8 or a rune that is a space
// or not printable.
func needsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b != '\\' && (b == ' ' || b == '=' || !jsonSafe(b)) {
				return true
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError || unicode.IsSpace(c) || !unicode.IsPrint(c) {
			return true
		}
		i += size
	}
	return false
}

// appendRFC3339Millis appends t as slog's text handler does: RFC 3339
// with exactly three digits of milliseconds.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	// RFC3339Nano trims trailing zeros: a tenth of a millisecond more
	// makes exactly four digits, the fourth of which is dropped.
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
}

// appendDuration appends d as time.Duration.String writes it.
func appendDuration(b []byte, d time.Duration) []byte {
	u := uint64(d)
	if d < 0 {
		b, u = append(b, '-'), -u
	}
	switch {
	case u == 0:
		return append(b, "0s"...)
	case u < uint64(time.Microsecond):
		return append(strconv.AppendUint(b, u, 10), "ns"...)
	case u < uint64(time.Millisecond):
		return append(appendDecimal(b, u, uint64(time.Microsecond)), "µs"...)
	case u < uint64(time.Second):
		return append(appendDecimal(b, u, uint64(time.Millisecond)), "ms"...)
	}
	h, u := u/uint64(time.Hour), u%uint64(time.Hour)
	m, u := u/uint64(time.Minute), u%uint64(time.Minute)
	if h > 0 {
		b = append(strconv.AppendUint(b, h, 10), 'h')
	}
	if h > 0 || m > 0 {
		b = append(strconv.AppendUint(b, m, 10), 'm')
	}
	return append(appendDecimal(b, u, uint64(time.Second)), 's')
}

// appendDecimal appends v/unit (unit a power of ten) as a decimal
// without trailing zeros, and without a point when it is whole.
func appendDecimal(b []byte, v, unit uint64) []byte {
	b = strconv.AppendUint(b, v/unit, 10)
	if f := v % unit; f != 0 {
		b = append(b, '.')
		for unit /= 10; f != 0; unit /= 10 {
			b = append(b, byte('0'+f/unit))
			f %= unit
		}
	}
	return b
}
