package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// same checks that Append encodes v as json.Marshal does, or declines a
// value it does not cover.
func same(t *testing.T, v any, covered bool) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, ok := Append([]byte("prefix"), v)
	if ok != covered {
		t.Fatalf("Append(%#v) reports %v, want %v", v, ok, covered)
	}
	if !ok {
		return
	}
	if werr != nil {
		t.Fatalf("Append(%#v) encoded what json.Marshal rejects: %v", v, werr)
	}
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("Append(%#v)\n got %s\nwant prefix%s", v, got, want)
	}
}

// TestAppendAsMarshal: every kind of value covered, with the edge cases of
// the standard library's encoding (escapes, float formats, nil, key
// order), encodes as json.Marshal does.
func TestAppendAsMarshal(t *testing.T) {
	big := map[string]any{}
	for i := 0; i < 40; i++ {
		big["k"+strconv.Itoa(i*7%40)] = i
	}
	var nilMap map[string]any
	var nilSlice []any
	for _, v := range []any{
		nil, true, false, "", "plain", `"quoted" \ back`, "<b>&amp;</b>", "\b\f\n\r\t\x00\x1f\x7f",
		"\xff\xfe invalid", "é ü 日本 😀", "\u2028\u2029", "a\u2028b",
		0, -1, math.MaxInt64, math.MinInt64, int8(-8), int16(16), int32(-32), int64(64),
		uint(1), uint8(8), uint16(16), uint32(32), uint64(math.MaxUint64), uintptr(7),
		0.0, math.Copysign(0, -1), 1.5, -2.25, 1e-6, 1e-7, 9.99e-7, 1e20, 1e21, 1.2e21, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-10, 3.0e-9,
		float32(0.1), float32(1e-7), float32(1e21), float32(3.4e38), float32(-1.5),
		map[string]any{}, map[string]any{"b": 1, "a": 2, "": 3, "B": 4, "ä": 5, "<": 6},
		big, nilMap, nilSlice, []any{}, []any{1, "two", 3.5, nil, true, []any{nilMap}},
		[]string{}, []string(nil), []string{"a", "<b>"},
		map[string]string{"z": "1", "a": "\n"}, map[string]string(nil),
		map[string][]string{"a": {"1", "2"}, "b": nil}, []map[string]any{{"x": 1}, nil},
		map[string]any{"query_params": map[string]any{"a": "1", "b": []string{"x", "y"}}, "async": true},
	} {
		same(t, v, true)
	}
}

// TestAppendDeclines: values whose encoding needs reflection, a method or
// an error go back to the caller, which leaves them to encoding/json.
func TestAppendDeclines(t *testing.T) {
	type named string
	deep := map[string]any{}
	for i, m := 0, deep; i < maxDepth+1; i++ {
		next := map[string]any{}
		m["x"] = next
		m = next
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for _, v := range []any{
		struct{ A int }{1}, &struct{}{}, named("x"), []byte("bytes"), json.Number("1"),
		time.Unix(0, 0), url.Values{"a": {"1"}}, map[int]string{1: "a"},
		math.NaN(), math.Inf(1), float32(math.Inf(-1)),
		map[string]any{"ok": 1, "bad": struct{}{}}, []any{1, math.NaN()},
		deep, cyclic,
	} {
		got, ok := Append(nil, v)
		if ok {
			t.Errorf("Append(%T) = %s, true; want it declined", v, got)
		}
	}
}

// TestAppendRandom compares Append with json.Marshal on random nested
// values whose strings hold every kind of byte.
func TestAppendRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		same(t, randomValue(r, 0), true)
	}
}

// randomValue returns a random covered value nested at most 4 deep.
func randomValue(r *rand.Rand, depth int) any {
	n := 9
	if depth >= 4 {
		n = 5
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return randomString(r)
	case 3:
		return r.Int64() >> r.IntN(64)
	case 4:
		if f := math.Float64frombits(r.Uint64()); !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f
		}
		return r.Float64() * 1e6
	case 5:
		m := map[string]any{}
		for k := r.IntN(12); k > 0; k-- {
			m[randomString(r)] = randomValue(r, depth+1)
		}
		return m
	case 6:
		s := make([]any, r.IntN(5))
		for i := range s {
			s[i] = randomValue(r, depth+1)
		}
		return s
	case 7:
		return []string{randomString(r), randomString(r)}
	default:
		return map[string]string{randomString(r): randomString(r)}
	}
}

// randomString returns a short string of ASCII, control bytes, HTML
// characters, multi-byte runes and invalid UTF-8.
func randomString(r *rand.Rand) string {
	pieces := []string{"a", "Z", "0", " ", "<", ">", "&", `"`, `\`, "\x00", "\x1f", "\b", "\f", "\n", "é", "😀", "\u2028", "\xff", "\xe2\x80"}
	var b strings.Builder
	for k := r.IntN(6); k > 0; k-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// FuzzString: any string encodes as json.Marshal encodes it.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "abc", "<&>", "\u2028", "\xff\xfe", "\x00\x7f\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		same(t, s, true)
		same(t, map[string]any{s: s}, true)
	})
}

// FuzzFloat: any finite float encodes as json.Marshal encodes it, as a
// float64 and as a float32.
func FuzzFloat(f *testing.F) {
	for _, x := range []float64{0, 1, -1.5, 1e-7, 1e21, 123.456, math.MaxFloat64} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		finite := !math.IsInf(x, 0) && !math.IsNaN(x)
		same(t, x, finite)
		x32 := float32(x)
		same(t, x32, !math.IsInf(float64(x32), 0) && !math.IsNaN(float64(x32)))
	})
}

// BenchmarkAppend encodes scenario 1's answer, by Append and by an
// encoding/json Encoder, as the return contract did before.
func BenchmarkAppend(b *testing.B) {
	v := map[string]any{"query_params": map[string]any{"a": "1", "b": "two"}, "async": true}
	b.Run("jsonenc", func(b *testing.B) {
		buf := make([]byte, 0, 256)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf, _ = Append(buf[:0], v)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf.Reset()
			_ = enc.Encode(v)
		}
	})
}
