package taskproto

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeResult(t *testing.T) {
	tests := []struct {
		raw  string
		want any
	}{
		{`1152921504606846976`, int64(1 << 60)},
		{`2`, int64(2)},
		{`2.5`, 2.5},
		{`1e400`, math.Inf(1)},
		{`99999999999999999999`, 1e20},
		{`"s"`, "s"},
		{`true`, true},
		{`null`, nil},
		{`{"a":[1,{"b":2.5}],"c":"x"}`, map[string]any{"a": []any{int64(1), map[string]any{"b": 2.5}}, "c": "x"}},
	}
	for _, tt := range tests {
		got, err := DecodeResult(json.RawMessage(tt.raw))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DecodeResult(%s) = %#v, %v; want %#v", tt.raw, got, err, tt.want)
		}
	}
	if _, err := DecodeResult(json.RawMessage(`{`)); err == nil {
		t.Error("DecodeResult accepts a broken document")
	}
}

type point struct {
	X, Y int
}

func TestDecodeArgs(t *testing.T) {
	var (
		tInt   = reflect.TypeOf(0)
		tStr   = reflect.TypeOf("")
		tAny   = reflect.TypeOf((*any)(nil)).Elem()
		tMap   = reflect.TypeOf(map[string]any(nil))
		tPoint = reflect.TypeOf(point{})
		tPtr   = reflect.TypeOf(&point{})
		tInts  = reflect.TypeOf([]int(nil))
	)
	tests := []struct {
		name     string
		raw      string
		types    []reflect.Type
		variadic bool
		want     []any  // the decoded values, when err is ""
		err      string // in the error
	}{
		{"typed", `[1,"a",{"X":1,"Y":2}]`, []reflect.Type{tInt, tStr, tPoint}, false, []any{1, "a", point{1, 2}}, ""},
		{"untyped whole numbers", `[1152921504606846976,{"n":3}]`, []reflect.Type{tAny, tMap}, false,
			[]any{int64(1 << 60), map[string]any{"n": int64(3)}}, ""},
		{"null pointer", `[null]`, []reflect.Type{tPtr}, false, []any{(*point)(nil)}, ""},
		{"empty args", ``, nil, false, []any{}, ""},
		{"variadic", `["a",1,2,3]`, []reflect.Type{tStr, tInts}, true, []any{"a", []int{1, 2, 3}}, ""},
		{"variadic empty", `["a"]`, []reflect.Type{tStr, tInts}, true, []any{"a", []int{}}, ""},
		{"too few", `[1]`, []reflect.Type{tInt, tInt}, false, nil, "f takes 2 argument(s), got 1"},
		{"too many", `[1,2,3]`, []reflect.Type{tInt, tInt}, false, nil, "f takes 2 argument(s), got 3"},
		{"variadic too few", `[]`, []reflect.Type{tStr, tInts}, true, nil, "f takes at least 1 argument(s), got 0"},
		{"no array", `{"a":1}`, []reflect.Type{tInt}, false, nil, "the arguments are no JSON array"},
		{"null int", `[null]`, []reflect.Type{tInt}, false, nil, "argument 1: cannot use JSON null as int"},
		{"wrong type", `[1,"x"]`, []reflect.Type{tInt, tInt}, false, nil, "argument 2: cannot use JSON string as int"},
		{"wrong field type", `[{"X":"x"}]`, []reflect.Type{tPoint}, false, nil, "argument 1 at X: cannot use JSON string as int"},
		{"unknown field", `[{"Z":1}]`, []reflect.Type{tPoint}, false, nil, `argument 1: cannot use JSON object with unknown field "Z" as taskproto.point`},
		{"array for map", `[[1]]`, []reflect.Type{tMap}, false, nil, "argument 1: cannot use JSON array as map[string]interface {}"},
		{"variadic element", `["a",1,"b"]`, []reflect.Type{tStr, tInts}, true, nil, "argument 3: cannot use JSON string as int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeArgs(json.RawMessage(tt.raw), "f", tt.types, tt.variadic)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			vals := make([]any, len(got))
			for i, v := range got {
				vals[i] = v.Interface()
			}
			if !reflect.DeepEqual(vals, tt.want) {
				t.Fatalf("got %#v, want %#v", vals, tt.want)
			}
		})
	}
}

func TestEncodeArgs(t *testing.T) {
	if b, err := EncodeArgs(nil); err != nil || string(b) != `[]` {
		t.Errorf("EncodeArgs(nil) = %s, %v", b, err)
	}
	if b, err := EncodeArgs([]any{1, "a"}); err != nil || string(b) != `[1,"a"]` {
		t.Errorf("EncodeArgs = %s, %v", b, err)
	}
	if _, err := EncodeArgs([]any{func() {}}); err == nil || !strings.Contains(err.Error(), "arguments must be JSON-encodable") {
		t.Errorf("a func argument: %v", err)
	}
	if _, err := EncodeArgs([]any{strings.Repeat("x", MaxArgs)}); err == nil || !strings.Contains(err.Error(), "the bound is") {
		t.Errorf("too large: %v", err)
	}
}
