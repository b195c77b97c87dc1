package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"sort"
	"strings"
)

// Error codes of API.Bind, sent as the "error" field of its JSON error
// body (see BindError).
const (
	// CodeInvalidInput: the body could not be decoded, or a query or path
	// value does not convert to its field's type (400).
	CodeInvalidInput = "invalid_input"
	// CodeValidationFailed: the input decoded but breaks a validate rule
	// (422).
	CodeValidationFailed = "validation_failed"
	// CodeUnsupportedMediaType: a body whose Content-Type Bind does not
	// decode (415).
	CodeUnsupportedMediaType = "unsupported_media_type"
)

// Bind decodes the request's input into dst, a pointer to a struct, with
// the values as the client sent them: neither trimmed nor stripped of
// HTML tags, unlike Input. In order:
//
//  1. The body of a POST, PUT or PATCH request, by its Content-Type:
//     application/json (and +json types) as encoding/json decodes it, by
//     the `json` tags; application/x-www-form-urlencoded and
//     multipart/form-data by the `form` tags (see below). An empty body is
//     no error; a body of another type is 415 unsupported_media_type.
//  2. Fields tagged `query:"name"` from the query string, at any depth of
//     dst, whatever the method.
//  3. Fields tagged `param:"name"` from the path parameters (API.Param).
//  4. The `validate:"..."` tags, checked by
//     github.com/go-playground/validator/v10 (its rules: required, email,
//     min=8, oneof=a b, dive, ...).
//
// A form or multipart body fills each exported field by the name in its
// `form` tag, else the name in its `json` tag, else the field's name; a
// tag "-" skips the field. A nested struct is filled from names prefixed
// with its own name and a dot ("author.name"), an embedded one from the
// names of its fields. A field of type *multipart.FileHeader, or a slice
// of them, takes the uploaded files of its name. Form, query and path
// values are converted to the field's type: strings, booleans ("true",
// "false", "1", "0", "on", "off"), integers, floats, time.Time (RFC 3339,
// "2006-01-02" or "2006-01-02T15:04"), time.Duration ("1m30s"), types
// with an UnmarshalText method, pointers to these, and slices of them (one
// element a value, for a name given several times). An empty value leaves
// a non-string field at its zero value, for `validate:"required"` to catch.
// A field tagged query or param takes nothing from the body unless a tag
// of the body's kind names it too (json; for a form, form or json).
//
// The body stays bounded as for every reader (Config.MaxBodyBytes,
// MaxInputFields, MaxInputDepth, BodyTimeout). Bind does not end the
// handler: it returns a *BindError when the input is at fault, which the
// handler returns to answer it in the framework's JSON envelope (400
// invalid_input, 422 validation_failed, 413, 408, 415), or inspects with
// errors.As to answer its own shape. Any other error (dst is no pointer to
// a struct, a field's type that form values cannot fill) is the program's,
// and answers 500 when returned.
//
//	var post = func(api *host.API) (any, error) {
//		var in struct {
//			Email    string `json:"email" validate:"required,email"`
//			Password string `json:"password" validate:"required,min=8"`
//			Page     int    `query:"page"`
//		}
//		if err := api.Bind(&in); err != nil {
//			return nil, err
//		}
//		...
//	}
func (a *API) Bind(dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("zealgo: Bind needs a non-nil pointer to a struct, not %T", dst)
	}
	b := &binder{api: a, dst: rv.Elem()}
	err := b.run()
	var be *BindError
	if errors.As(err, &be) && a.in != nil {
		a.in.handed = true // the handler answers for the input now
	}
	return err
}

// binder is one Bind call.
type binder struct {
	api    *API
	dst    reflect.Value
	isJSON bool // the body was JSON: validation names fields by their JSON names, else by their form names
}

func (b *binder) run() error {
	if err := b.body(); err != nil {
		return err
	}
	if err := b.fill(querySource(b.api.r.URL.Query())); err != nil {
		return err
	}
	if err := b.fill(paramSource(b.api)); err != nil {
		return err
	}
	return validateStruct(b.dst, !b.isJSON)
}

// body decodes the body of a POST, PUT or PATCH request into dst.
func (b *binder) body() error {
	in := b.api.in
	if in == nil {
		return nil
	}
	if e := in.readBody(); e != nil {
		return fromInputError(e)
	}
	if len(in.body) == 0 {
		return nil
	}
	ct := b.api.r.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case isJSONType(ct):
		b.isJSON = true
		if err := decodeJSON(in.body, b.dst, in.cfg); err != nil {
			return err
		}
		clearURLFields(b.dst)
		return nil
	case mt == "application/x-www-form-urlencoded" || mt == "multipart/form-data":
		if e := in.parse(); e != nil {
			return fromInputError(e)
		}
		return b.fill(formSource(in.post, b.api.r.MultipartForm))
	}
	hint := "the body's Content-Type is " + quoteType(ct) +
		"; send application/json, application/x-www-form-urlencoded or multipart/form-data"
	return &BindError{Status: http.StatusUnsupportedMediaType, Code: CodeUnsupportedMediaType, Hint: hint}
}

func quoteType(ct string) string {
	if ct == "" {
		return "missing"
	}
	return fmt.Sprintf("%q", ct)
}

// decodeJSON decodes a JSON body into dst as encoding/json does, after
// the checks of the input step on its nesting and its number of members.
func decodeJSON(body []byte, dst reflect.Value, cfg *Config) error {
	depth, members := jsonShape(body)
	if depth > cfg.MaxInputDepth {
		return invalidInput(fmt.Sprintf("the JSON body nests deeper than %d levels", cfg.MaxInputDepth), nil)
	}
	if members > cfg.MaxInputFields {
		return invalidInput(fmt.Sprintf("the request body holds more than %d fields", cfg.MaxInputFields), nil)
	}
	err := json.Unmarshal(body, dst.Addr().Interface())
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return invalidInput("the JSON body must be an object, not "+article(te.Value), err)
		}
		fe := FieldError{Field: te.Field, Rule: "type",
			Message: fmt.Sprintf("%s must be %s, not %s", te.Field, jsonKind(te.Type), article(te.Value))}
		return invalidInput("the JSON body does not fit: "+fe.Message, err, fe)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return invalidInput(fmt.Sprintf("the JSON body is malformed: %v", err), err)
	}
	return invalidInput(fmt.Sprintf("the JSON body does not fit: %v", err), err)
}

// jsonKind names what JSON value a Go type takes.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a " + t.String()
}

// article puts "a" or "an" before a JSON value kind ("string", "number
// 1.5", "object").
func article(v string) string {
	if v != "" && strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
}

// BindError is the error of API.Bind when the input is at fault. Returned
// by a handler (as its error result, or as its only result), it answers
// Status in the JSON envelope:
//
//	{"error": Code, "hint": Hint, "fields": {"email": {"rule": "email", "message": "email must be a valid email address"}}}
//
// "fields" is there when fields are named: 400 invalid_input for a value
// of the wrong type, 422 validation_failed for every field that breaks a
// rule (its "param" is the rule's argument, as "8" for min=8). Other
// statuses: 413 request_too_large, 408 request_timeout, 400 invalid_input
// for a malformed body, 415 unsupported_media_type. A handler that answers
// its own shape takes the error with errors.As and reads Fields.
type BindError struct {
	// Status is the HTTP status: 400, 408, 413, 415 or 422.
	Status int
	// Code is the "error" of the envelope: CodeInvalidInput,
	// CodeValidationFailed, CodeUnsupportedMediaType, or the input step's
	// CodeRequestEntityLarge and CodeRequestTimeout.
	Code string
	// Hint says what is wrong, for people.
	Hint string
	// Fields are the failing fields, in the order of the struct.
	Fields []FieldError
	// Err is the decoder's error behind a malformed body, if any.
	Err error
}

// FieldError is one failing field of a BindError.
type FieldError struct {
	// Field is the field's name as the client spells it: its JSON name for
	// a JSON body, its form name for a form or no body, its query or param
	// name; a nested field is a dotted path with indexes ("items[0].name").
	Field string
	// Rule is the validate rule the value breaks ("required", "email",
	// "min", ...), or "type" for a value of the wrong type.
	Rule string
	// Param is the rule's argument ("8" for min=8), or "".
	Param string
	// Message says what is wrong, in English, naming the field.
	Message string
}

// Error returns "zealgo: <code>: <hint>".
func (e *BindError) Error() string { return "zealgo: " + e.Code + ": " + e.Hint }

// Unwrap returns the decoder's error behind the BindError, if any.
func (e *BindError) Unwrap() error { return e.Err }

// As lets errors.As see a BindError as the *Error it answers, which is how
// a returned BindError reaches the client in the framework's envelope.
func (e *BindError) As(target any) bool {
	p, ok := target.(**Error)
	if ok {
		*p = e.envelope()
	}
	return ok
}

// envelope is the *Error that answers e.
func (e *BindError) envelope() *Error {
	out := &Error{Status: e.Status, Code: e.Code, Hint: e.Hint}
	if len(e.Fields) > 0 {
		fields := make(map[string]any, len(e.Fields))
		for _, f := range e.Fields {
			m := map[string]any{"rule": f.Rule, "message": f.Message}
			if f.Param != "" {
				m["param"] = f.Param
			}
			if _, dup := fields[f.Field]; !dup {
				fields[f.Field] = m
			}
		}
		out.Fields = map[string]any{"fields": fields}
	}
	return out
}

// invalidInput is a 400 invalid_input BindError.
func invalidInput(hint string, err error, fields ...FieldError) *BindError {
	return &BindError{Status: http.StatusBadRequest, Code: CodeInvalidInput, Hint: hint, Fields: fields, Err: err}
}

// fromInputError turns an error of the input step (413, 408, 400) into a
// BindError.
func fromInputError(e *Error) *BindError {
	code := e.Code
	if e.Status == http.StatusBadRequest {
		code = CodeInvalidInput
	}
	return &BindError{Status: e.Status, Code: code, Hint: e.Hint, Err: e}
}

// fieldNames returns the names of fields, sorted, for a hint.
func fieldNames(fields []FieldError) string {
	seen := map[string]bool{}
	var names []string
	for _, f := range fields {
		if !seen[f.Field] {
			seen[f.Field] = true
			names = append(names, f.Field)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
