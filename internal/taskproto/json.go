package taskproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// MaxArgs bounds the encoded arguments of one task, so that its Run
// message fits in a frame.
const MaxArgs = MaxFrame - 64<<10

// EncodeArgs encodes a task's positional arguments as a JSON array (nil
// as an empty one), refusing what JSON cannot encode and arguments over
// MaxArgs.
func EncodeArgs(args []any) (json.RawMessage, error) {
	if args == nil {
		args = []any{}
	}
	enc, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("arguments must be JSON-encodable: %w", err)
	}
	if len(enc) > MaxArgs {
		return nil, fmt.Errorf("arguments are %d bytes encoded; the bound is %d", len(enc), MaxArgs)
	}
	return enc, nil
}

// DecodeResult decodes a task's JSON result for the finish callback:
// objects become map[string]any, arrays []any, strings and booleans
// themselves, and a number int64 when JSON writes it as an integer that
// fits (so that large integers such as 1<<60 keep every digit), float64
// otherwise. A float64 result with a whole value, such as 2.0, which JSON
// writes as 2, thus arrives as int64 too.
func DecodeResult(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return resultNumbers(v), nil
}

// resultNumbers replaces each json.Number in v with an int64 or a
// float64.
func resultNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64() // out of range: ±Inf, which JSON never writes
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = resultNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = resultNumbers(e)
		}
	}
	return v
}

// DecodeArgs decodes raw, a JSON array of positional arguments (empty
// when raw is), into values of types, the positional parameters of the
// func called name. When variadic is set, the last of types is the slice
// type of a variadic parameter, which takes the remaining arguments.
func DecodeArgs(raw json.RawMessage, name string, types []reflect.Type, variadic bool) ([]reflect.Value, error) {
	var list []json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("the arguments are no JSON array: %w", err)
		}
	}
	n := len(types)
	switch {
	case !variadic && len(list) != n:
		return nil, fmt.Errorf("%s takes %d argument(s), got %d", name, n, len(list))
	case variadic && len(list) < n-1:
		return nil, fmt.Errorf("%s takes at least %d argument(s), got %d", name, n-1, len(list))
	}
	out := make([]reflect.Value, 0, n)
	for i, t := range types {
		if variadic && i == n-1 {
			rest := reflect.MakeSlice(t, len(list)-i, len(list)-i)
			for k := 0; k < rest.Len(); k++ {
				if err := DecodeArg(list[i+k], rest.Index(k).Addr(), i+k+1); err != nil {
					return nil, err
				}
			}
			return append(out, rest), nil
		}
		v := reflect.New(t)
		if err := DecodeArg(list[i], v, i+1); err != nil {
			return nil, err
		}
		out = append(out, v.Elem())
	}
	return out, nil
}

// DecodeArg decodes the n-th (1-based) argument into ptr. It refuses what
// plain JSON decoding would silently turn into a zero value: null for a
// parameter whose type cannot be nil (int, string, a struct...), and an
// object field that the struct it fills does not have, at any depth.
// Numbers inside untyped values (any, map[string]any, []any) arrive as
// results do (DecodeResult).
func DecodeArg(raw json.RawMessage, ptr reflect.Value, n int) error {
	t := ptr.Elem().Type()
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if nilable(t) {
			return nil // the parameter stays nil
		}
		return fmt.Errorf("argument %d: cannot use JSON null as %s", n, t)
	}
	if t == typeAny || t == typeAnyMap || t == typeAnySlice {
		return decodeUntyped(raw, ptr, n)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(ptr.Interface())
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		at := ""
		if te.Field != "" {
			at = " at " + te.Field
		}
		return fmt.Errorf("argument %d%s: cannot use JSON %s as %s", n, at, te.Value, te.Type)
	}
	// DisallowUnknownFields reports `json: unknown field "Y"`, with no
	// type of its own.
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("argument %d: cannot use JSON object with unknown field %s as %s", n, field, t)
	}
	return fmt.Errorf("argument %d: %w", n, err)
}

// decodeUntyped decodes into an any, a map[string]any or an []any with
// whole numbers as int64 (plain JSON would make 1<<60 a float64).
func decodeUntyped(raw json.RawMessage, ptr reflect.Value, n int) error {
	t := ptr.Elem().Type()
	v, err := DecodeResult(raw)
	if err != nil {
		return fmt.Errorf("argument %d: %w", n, err)
	}
	if rv := reflect.ValueOf(v); rv.IsValid() && rv.Type().AssignableTo(t) {
		ptr.Elem().Set(rv)
		return nil
	}
	return fmt.Errorf("argument %d: cannot use JSON %s as %s", n, jsonKind(v), t)
}

var (
	typeAny      = reflect.TypeOf((*any)(nil)).Elem()
	typeAnyMap   = reflect.TypeOf(map[string]any(nil))
	typeAnySlice = reflect.TypeOf([]any(nil))
)

// jsonKind names the JSON kind of a decoded value, for errors.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	}
	return "value"
}

// nilable reports whether nil is a value of t.
func nilable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	}
	return false
}
