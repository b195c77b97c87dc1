package logbuf

import (
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// The encodings of slog's handlers, JSON and text, of the values a
// Record holds. Strings in JSON are escaped by jsonenc.Slog.

// textBare holds true for the ASCII bytes a bare text value may hold:
// printable ones but ' ', '"' and '='.
var textBare = func() (t [256]bool) {
	for b := 0x21; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '='
	}
	return t
}()

// needsQuoting is slog's text handler's test: empty, or holding a space,
// '=', '"', a control character, invalid UTF-8 or a rune that is a space
// or not printable.
func needsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		b := s[i]
		if textBare[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			return true
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError || unicode.IsSpace(c) || !unicode.IsPrint(c) {
			return true
		}
		i += size
	}
	return false
}

// appendTextString appends s as slog's text handler does: bare, or
// quoted by strconv.Quote when it needs quoting.
func appendTextString(b []byte, s string) []byte {
	if needsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// second is a time to the second, formatted as RFC 3339 without a
// fraction: the date and clock, and the zone.
type second struct {
	unix  int64
	loc   *time.Location
	clock string // "2006-01-02T15:04:05"
	zone  string // "Z" or "-07:00"
}

// appendTime appends t as slog's handlers do: in JSON RFC 3339 with the
// nanoseconds (time.RFC3339Nano), in text RFC 3339 with exactly three
// digits of milliseconds. The records of one second share one
// formatting of the date, the clock and the zone.
func (d *Direct) appendTime(b []byte, t time.Time) []byte {
	s := d.second.Load()
	if s == nil || s.unix != t.Unix() || s.loc != t.Location() {
		if s = newSecond(t); s == nil {
			return appendTimeFormatted(b, t, d.json)
		}
		d.second.Store(s)
	}
	b = append(b, s.clock...)
	ns := uint64(t.Nanosecond())
	if d.json {
		b = appendNanos(b, ns)
	} else {
		ms := ns / uint64(time.Millisecond)
		b = append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	}
	return append(b, s.zone...)
}

// newSecond formats the second of t; nil for a year of other than four
// digits.
func newSecond(t time.Time) *second {
	if y := t.Year(); y < 0 || y >= 10000 {
		return nil
	}
	f := t.Add(-time.Duration(t.Nanosecond())).AppendFormat(make([]byte, 0, 32), time.RFC3339)
	const n = len("2006-01-02T15:04:05")
	return &second{unix: t.Unix(), loc: t.Location(), clock: string(f[:n]), zone: string(f[n:])}
}

// appendNanos appends the fraction of RFC3339Nano: a point and the
// nanoseconds without trailing zeros, nothing for none.
func appendNanos(b []byte, ns uint64) []byte {
	if ns == 0 {
		return b
	}
	var digits [9]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + ns%10)
		ns /= 10
	}
	n := len(digits)
	for digits[n-1] == '0' {
		n--
	}
	return append(append(b, '.'), digits[:n]...)
}

// appendTimeFormatted is appendTime formatting t whole.
func appendTimeFormatted(b []byte, t time.Time, json bool) []byte {
	if json {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
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
