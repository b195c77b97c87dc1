// Package jsonenc encodes the values handlers return most often — maps
// and slices of strings, numbers, booleans and nil, as map[string]any
// literals and decoded JSON build them — without reflection, byte for
// byte as encoding/json.Marshal encodes them. Anything else (a struct, a
// pointer, a named type, which may have a MarshalJSON method, a float
// that is NaN or infinite, nesting past maxDepth) is left to
// encoding/json: Append reports that it could not encode the value.
//
// A value's encoding is the standard library's: map keys sorted byte by
// byte, strings escaped as Escaping HTML says, floats formatted as ES6
// does (strconv's shortest form, with an exponent below 1e-6 and from
// 1e21 on), nil maps and slices as null.
package jsonenc

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting Append follows; deeper values (and maps
// that hold themselves) go to encoding/json, which detects cycles.
const maxDepth = 64

// Append appends v encoded as JSON to dst and reports true, when v is
// made only of what the package covers (its doc). Otherwise it reports
// false, and dst[len(dst):cap(dst)] may have been written to: the caller
// encodes v by other means.
func Append(dst []byte, v any) ([]byte, bool) {
	return appendValue(dst, v, 0)
}

// appendValue appends v at nesting depth.
func appendValue(dst []byte, v any, depth int) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return AppendString(dst, x), true
	case bool:
		return strconv.AppendBool(dst, x), true
	case int:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int64:
		return strconv.AppendInt(dst, x, 10), true
	case float64:
		return appendFloat(dst, x, 64)
	case map[string]any:
		return appendMap(dst, x, depth, appendValue)
	case []any:
		return appendSlice(dst, x, depth, appendValue)
	case []string:
		return appendSlice(dst, x, depth, appendStringElem)
	case []map[string]any:
		return appendSlice(dst, x, depth, appendMapElem)
	case map[string]string:
		return appendMap(dst, x, depth, appendStringElem)
	case map[string][]string:
		return appendMap(dst, x, depth, appendStringsElem)
	}
	return appendScalar(dst, v)
}

// appendScalar appends the numbers appendValue leaves.
func appendScalar(dst []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), true
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint64:
		return strconv.AppendUint(dst, x, 10), true
	case uintptr:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case float32:
		return appendFloat(dst, float64(x), 32)
	}
	return dst, false
}

// The element encoders of the typed maps and slices.
func appendStringElem(dst []byte, s string, _ int) ([]byte, bool) { return AppendString(dst, s), true }
func appendMapElem(dst []byte, m map[string]any, depth int) ([]byte, bool) {
	return appendMap(dst, m, depth, appendValue)
}
func appendStringsElem(dst []byte, s []string, depth int) ([]byte, bool) {
	return appendSlice(dst, s, depth, appendStringElem)
}

// appendFloat appends f as encoding/json formats a float of bits bits;
// NaN and the infinities are no JSON.
func appendFloat(dst []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' { // e-07, not e-7: the exponent is not padded
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// appendSlice appends s, each element by elem, or null for a nil slice.
func appendSlice[E any](dst []byte, s []E, depth int, elem func([]byte, E, int) ([]byte, bool)) ([]byte, bool) {
	if s == nil {
		return append(dst, "null"...), true
	}
	if depth >= maxDepth {
		return dst, false
	}
	dst = append(dst, '[')
	for i, v := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = elem(dst, v, depth+1); !ok {
			return dst, false
		}
	}
	return append(dst, ']'), true
}

// entry is a key of a map with its value.
type entry[V any] struct {
	key string
	val V
}

// smallMap is the size of map whose entries are sorted on the stack.
const smallMap = 8

// appendMap appends m with its keys sorted, each value by elem, or null
// for a nil map.
func appendMap[V any](dst []byte, m map[string]V, depth int, elem func([]byte, V, int) ([]byte, bool)) ([]byte, bool) {
	if m == nil {
		return append(dst, "null"...), true
	}
	if depth >= maxDepth {
		return dst, false
	}
	var small [smallMap]entry[V]
	es := small[:0]
	if len(m) > smallMap {
		es = make([]entry[V], 0, len(m))
	}
	for k, v := range m {
		es = append(es, entry[V]{k, v})
	}
	sortEntries(es)
	dst = append(dst, '{')
	for i := range es {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(AppendString(dst, es[i].key), ':')
		var ok bool
		if dst, ok = elem(dst, es[i].val, depth+1); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// sortEntries sorts es by key, byte by byte (keys are distinct): by
// insertion when there are few.
func sortEntries[V any](es []entry[V]) {
	if len(es) > smallMap {
		slices.SortFunc(es, func(a, b entry[V]) int { return strings.Compare(a.key, b.key) })
		return
	}
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].key < es[j-1].key; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}
