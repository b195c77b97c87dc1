package host

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWriteJSONAsEncodingJSON: the return contract's JSON is encoding/json's,
// byte for byte and without its final newline, for the values it encodes
// itself (internal/jsonenc) and for those it leaves to encoding/json,
// buffered or written through a response already begun; a value that
// cannot be encoded writes nothing and is an error.
func TestWriteJSONAsEncodingJSON(t *testing.T) {
	type rec struct {
		ID   int       `json:"id"`
		At   time.Time `json:"at"`
		Tags []string  `json:"tags,omitempty"`
	}
	for _, v := range []any{
		map[string]any{"query_params": map[string]any{"b": "two", "a": "<1>"}, "async": true, "n": 1e21, "f": 0.000001},
		[]map[string]any{{"id": 1, "tags": []string{"x"}}, nil},
		map[string]any{"rec": rec{ID: 1, At: time.Unix(0, 0).UTC()}, "ok": true}, // left to encoding/json
		rec{ID: 2},
		[]any{"\u2028", "\xff", json.Number("12")},
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, committed := range []bool{false, true} {
			w := httptest.NewRecorder()
			res := &Response{Parent: w}
			if committed {
				_ = res.commit()
			}
			if err := writeJSON(res, v); err != nil {
				t.Fatalf("writeJSON(%T): %v", v, err)
			}
			_ = res.commit()
			if got := w.Body.String(); got != string(want) {
				t.Errorf("writeJSON(%T), committed %v:\n got %s\nwant %s", v, committed, got, want)
			}
			if ct := w.Header().Get("Content-Type"); ct != contentJSON {
				t.Errorf("Content-Type %q", ct)
			}
		}
	}
	w := httptest.NewRecorder()
	res := &Response{Parent: w}
	err := writeJSON(res, map[string]any{"ok": 1, "bad": math.NaN()})
	if err == nil || !strings.HasPrefix(err.Error(), "zealgo: ") {
		t.Fatalf("NaN: err %v, want a zealgo error", err)
	}
	if res.buf != nil && res.buf.Len() != 0 {
		t.Fatalf("NaN: %q buffered", res.buf.String())
	}
}

// TestWriteJSONAllocs: a map of plain values, what most handlers return,
// is encoded without allocating (encoding/json's map encoder allocates
// about ten times for scenario 1's answer).
func TestWriteJSONAllocs(t *testing.T) {
	v := map[string]any{"query_params": map[string]any{"a": "1", "b": "two"}, "async": true}
	res := &Response{Parent: httptest.NewRecorder()}
	res.buffer() // kept: the pool may drop what it is given (always under -race)
	allocs := testing.AllocsPerRun(200, func() {
		res.buf.Reset()
		if err := writeJSON(res, v); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Fatalf("writeJSON allocates %.1f times per call, want none", allocs)
	}
}
