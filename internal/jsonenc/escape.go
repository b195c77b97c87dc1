package jsonenc

import "unicode/utf8"

// An Escaping is a way of escaping the bytes of a JSON string: which
// ASCII bytes stay as they are and which control characters have a short
// escape (\n); every other control character is written \u00XX, each
// byte of invalid UTF-8 \ufffd, and U+2028 and U+2029 escaped.
type Escaping struct {
	// safe holds true for the bytes written as they are. Bytes from 0x80
	// on are false: UTF-8 is checked rune by rune.
	safe [256]bool
	// short holds the letter of the short escape of each control
	// character that has one, 0 for the others.
	short [0x20]byte
}

// The escapings of the standard library.
var (
	// HTML is encoding/json's (json.Marshal, an Encoder by default): '<',
	// '>' and '&' escaped too, so that the JSON is safe inside HTML, and
	// short escapes for \b, \f, \n, \r and \t.
	HTML = newEscaping("<>&", "b\bf\fn\nr\rt\t")
	// Slog is log/slog's JSON handler's: short escapes for \n, \r and \t
	// only, and no HTML escaping.
	Slog = newEscaping("", "n\nr\rt\t")
)

// newEscaping returns the escaping that escapes the ASCII bytes of also
// beside '"', '\' and the control characters, with short, pairs of a
// letter and its control character, as the short escapes.
func newEscaping(also, short string) *Escaping {
	e := new(Escaping)
	for b := 0x20; b < utf8.RuneSelf; b++ {
		e.safe[b] = b != '"' && b != '\\'
	}
	for i := 0; i < len(also); i++ {
		e.safe[also[i]] = false
	}
	for i := 0; i+1 < len(short); i += 2 {
		e.short[short[i+1]] = short[i]
	}
	return e
}

const hexDigits = "0123456789abcdef"

// Append appends s escaped, without quotes. Safe ASCII, all of most
// strings, is copied at once.
func (e *Escaping) Append(dst []byte, s string) []byte {
	i := 0
	for i < len(s) && e.safe[s[i]] {
		i++
	}
	if i == len(s) {
		return append(dst, s...)
	}
	return e.appendEscaped(append(dst, s[:i]...), s[i:])
}

// appendEscaped is Append from the first byte that may need escaping.
func (e *Escaping) appendEscaped(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if e.safe[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch {
			case b == '\\' || b == '"':
				dst = append(dst, '\\', b)
			case b < 0x20 && e.short[b] != 0:
				dst = append(dst, '\\', e.short[b])
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// AppendString appends s as a JSON string, quoted and escaped as
// encoding/json does (HTML).
func AppendString(dst []byte, s string) []byte {
	return append(HTML.Append(append(dst, '"'), s), '"')
}
