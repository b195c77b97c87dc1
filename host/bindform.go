package host

import (
	"encoding"
	"fmt"
	"mime/multipart"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// A valueSource is where Bind takes string values from, by field name: a
// form body, the query string or the path parameters.
type valueSource struct {
	// tag is the struct tag that names a field for this source: "form",
	// "query" or "param".
	tag string
	// all: every field binds (a form body), by its form tag, json tag or
	// name, nested structs by a dotted prefix. Otherwise only the fields
	// that carry tag do, at any depth.
	all    bool
	values func(name string) ([]string, bool)
	files  map[string][]*multipart.FileHeader
}

func formSource(post url.Values, mf *multipart.Form) *valueSource {
	src := &valueSource{tag: "form", all: true, values: lookup(post)}
	if mf != nil {
		src.files = mf.File
	}
	return src
}

func querySource(q url.Values) *valueSource {
	return &valueSource{tag: "query", values: lookup(q)}
}

func lookup(v url.Values) func(string) ([]string, bool) {
	return func(name string) ([]string, bool) {
		vals, ok := v[name]
		return vals, ok && len(vals) > 0
	}
}

var (
	typeTime            = reflect.TypeOf(time.Time{})
	typeDuration        = reflect.TypeOf(time.Duration(0))
	typeFileHeader      = reflect.TypeOf((*multipart.FileHeader)(nil))
	typeTextUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

// fill sets the fields of dst that src has values for. Values that do not
// convert make a 400 invalid_input naming every such field.
func (b *binder) fill(src *valueSource) error {
	if src == nil {
		return nil
	}
	var bad []FieldError
	if _, err := src.walk(b.dst, "", &bad); err != nil {
		return err
	}
	if len(bad) > 0 {
		return invalidInput("some values do not convert to their field's type: "+fieldNames(bad), nil, bad...)
	}
	return nil
}

// walk fills the fields of the struct v, whose names src prefixes with
// prefix, and reports whether it set any.
func (src *valueSource) walk(v reflect.Value, prefix string, bad *[]FieldError) (bool, error) {
	t, set := v.Type(), false
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, tagged := src.name(sf)
		if name == "-" {
			continue
		}
		var ok bool
		var err error
		switch {
		case (src.all || !tagged) && isNested(sf.Type):
			p := prefix
			if src.all && !sf.Anonymous {
				p += name + "."
			}
			ok, err = src.nested(v.Field(i), p, bad)
		case src.all || tagged:
			ok, err = src.leaf(v.Field(i), prefix+name, bad)
		}
		if err != nil {
			return set, fmt.Errorf("zealgo: Bind: field %s: %w", sf.Name, err)
		}
		set = set || ok
	}
	return set, nil
}

// name returns the name of sf for src, "-" to skip it, and whether sf
// carries src's own tag.
func (src *valueSource) name(sf reflect.StructField) (string, bool) {
	if n, ok := tagName(sf, src.tag); ok {
		return n, true
	}
	if !src.all {
		return "", false
	}
	if n, ok := tagName(sf, "json"); ok {
		return n, false
	}
	if tagged(sf, "query") || tagged(sf, "param") {
		return "-", false // its value comes from the URL, not the body
	}
	return sf.Name, false
}

// tagName returns the name that the tag key of sf gives, if it gives one.
func tagName(sf reflect.StructField, key string) (string, bool) {
	tag, ok := sf.Tag.Lookup(key)
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	return name, name != ""
}

func tagged(sf reflect.StructField, key string) bool {
	_, ok := sf.Tag.Lookup(key)
	return ok
}

// isNested reports whether t is a struct, or a pointer to one, whose
// fields bind one by one (not a time or a type that decodes text).
func isNested(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != typeTime && t != typeFileHeader.Elem() &&
		!reflect.PointerTo(t).Implements(typeTextUnmarshaler)
}

// nested walks the struct field fv, allocating it if it is a nil pointer
// and some value is found for it.
func (src *valueSource) nested(fv reflect.Value, prefix string, bad *[]FieldError) (bool, error) {
	if fv.Kind() != reflect.Pointer {
		return src.walk(fv, prefix, bad)
	}
	if !fv.IsNil() {
		return src.walk(fv.Elem(), prefix, bad)
	}
	p := reflect.New(fv.Type().Elem())
	ok, err := src.walk(p.Elem(), prefix, bad)
	if ok && err == nil {
		fv.Set(p)
	}
	return ok, err
}

// leaf fills fv from the values or files of name.
func (src *valueSource) leaf(fv reflect.Value, name string, bad *[]FieldError) (bool, error) {
	switch fv.Type() {
	case typeFileHeader:
		if fs := src.files[name]; len(fs) > 0 {
			fv.Set(reflect.ValueOf(fs[0]))
			return true, nil
		}
		return false, nil
	case reflect.SliceOf(typeFileHeader):
		if fs := src.files[name]; len(fs) > 0 {
			fv.Set(reflect.ValueOf(fs))
			return true, nil
		}
		return false, nil
	}
	vals, ok := src.values(name)
	if !ok {
		return false, nil
	}
	want, err := setValues(fv, vals)
	if err != nil {
		return false, err
	}
	if want != "" {
		*bad = append(*bad, FieldError{Field: name, Rule: "type", Message: name + " must be " + want})
		return false, nil
	}
	return true, nil
}

// setValues sets fv from vals: a slice takes them all, anything else the
// first. It returns what a value should have been when one does not
// convert, and an error when fv's type cannot take text at all.
func setValues(fv reflect.Value, vals []string) (string, error) {
	t := fv.Type()
	if t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 && !t.Implements(typeTextUnmarshaler) {
		s := reflect.MakeSlice(t, len(vals), len(vals))
		for i, v := range vals {
			if want, err := setText(s.Index(i), v); want != "" || err != nil {
				return want, err
			}
		}
		fv.Set(s)
		return "", nil
	}
	return setText(fv, vals[0])
}

// setText sets fv from the text s.
func setText(fv reflect.Value, s string) (string, error) {
	t := fv.Type()
	if s == "" && !textual(t) {
		fv.SetZero() // a nil pointer, a zero number: "absent"
		return "", nil
	}
	if t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		want, err := setText(p.Elem(), s)
		if want == "" && err == nil {
			fv.Set(p)
		}
		return want, err
	}
	switch t {
	case typeTime:
		return setTime(fv, s), nil
	case typeDuration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return "a duration such as 1m30s", nil
		}
		fv.SetInt(int64(d))
		return "", nil
	}
	if fv.CanAddr() && fv.Addr().Type().Implements(typeTextUnmarshaler) {
		if err := fv.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return "a valid " + t.String(), nil
		}
		return "", nil
	}
	return setKind(fv, s)
}

// textual reports whether t (or what it points to) takes an empty text
// as a value: a string or an interface.
func textual(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.String || t.Kind() == reflect.Interface
}

// setKind sets fv, of a basic kind, from s.
func setKind(fv reflect.Value, s string) (string, error) {
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(s)
	case reflect.Bool:
		v, ok := parseBool(s)
		if !ok {
			return "true or false", nil
		}
		fv.SetBool(v)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v, err := strconv.ParseInt(s, 10, fv.Type().Bits())
		if err != nil {
			return fmt.Sprintf("a whole number of %d bits", fv.Type().Bits()), nil
		}
		fv.SetInt(v)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v, err := strconv.ParseUint(s, 10, fv.Type().Bits())
		if err != nil {
			return fmt.Sprintf("a whole number from 0, of %d bits", fv.Type().Bits()), nil
		}
		fv.SetUint(v)
	case reflect.Float32, reflect.Float64:
		v, err := strconv.ParseFloat(s, fv.Type().Bits())
		if err != nil {
			return "a number", nil
		}
		fv.SetFloat(v)
	case reflect.Slice: // []byte
		fv.SetBytes([]byte(s))
	case reflect.Interface:
		if fv.NumMethod() > 0 {
			return "", fmt.Errorf("%s cannot hold text", fv.Type())
		}
		fv.Set(reflect.ValueOf(s))
	default:
		return "", fmt.Errorf("a %s cannot be filled from text", fv.Type())
	}
	return "", nil
}

// parseBool reads the booleans of forms: strconv's, and a checkbox's
// "on" and "off".
func parseBool(s string) (bool, bool) {
	switch s {
	case "on":
		return true, true
	case "off":
		return false, true
	}
	v, err := strconv.ParseBool(s)
	return v, err == nil
}

// timeLayouts are the times form values may hold: RFC 3339, an HTML date
// and an HTML datetime-local.
var timeLayouts = []string{time.RFC3339Nano, time.DateOnly, "2006-01-02T15:04", "2006-01-02T15:04:05"}

func setTime(fv reflect.Value, s string) string {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			fv.Set(reflect.ValueOf(t))
			return ""
		}
	}
	return "a date and time (RFC 3339, 2006-01-02 or 2006-01-02T15:04)"
}

// clearURLFields zeroes the fields of v that carry a query or param tag
// and no json tag, which a JSON body may have filled by their Go names:
// their values come from the URL alone.
func clearURLFields(v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		fv := v.Field(i)
		switch {
		case (tagged(sf, "query") || tagged(sf, "param")) && !tagged(sf, "json"):
			fv.SetZero()
		case isNested(sf.Type) && sf.Type.Kind() == reflect.Struct:
			clearURLFields(fv)
		case isNested(sf.Type) && !fv.IsNil():
			clearURLFields(fv.Elem())
		}
	}
}

// paramSource is the route parameters of the request (API.Param), or
// nil when its route has none. A function, not a method of API, whose
// signature would make every handler file's package read package reflect
// (see rtOf).
func paramSource(a *API) *valueSource {
	if len(a.params) == 0 {
		return nil
	}
	return &valueSource{tag: "param", values: func(name string) ([]string, bool) {
		v := a.Param(name)
		return []string{v}, v != ""
	}}
}
