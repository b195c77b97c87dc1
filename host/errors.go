package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"

	"github.com/zealgo/zealgo/interp"
)

// Error codes of the dispatcher, sent as the "error" field of a JSON error
// body. Clients branch on them; the "hint" beside them is for people.
const (
	CodeInvalidModule      = "invalid_module"
	CodeInvalidRequest     = "invalid_request"
	CodeMethodNotFound     = "method_not_found"
	CodeHandlerNotFound    = "handler_not_found"
	CodeUndefinedMethod    = "undefined_method"
	CodeMethodNotAllowed   = "method_not_allowed"
	CodeCompileError       = "handler_compile_error"
	CodeInternal           = "internal_error"
	CodeUnauthorized       = "unauthorized"
	CodeUnknownMiddleware  = "unknown_middleware"
	CodeInvalidBody        = "invalid_body"
	CodeNotFound           = "not_found"
	CodeRequestEntityLarge = "request_too_large"
	CodeRequestTimeout     = "request_timeout"
	CodeTooManyRequests    = "too_many_requests"
	CodeCrossOrigin        = "cross_origin_request"
	// CodeRouteConflict: a level of the path holds two route parameter
	// names ([slug].go beside [id].go), so no file serves it.
	CodeRouteConflict = "route_conflict"
)

// Error is an HTTP error with a machine-readable code and a hint for people.
// Returned from a handler (as its error result) or passed to API.Die, it is
// sent as {"error": Code, "hint": Hint} with Status and the Fields beside
// them. Any other error becomes a 500 internal_error.
type Error struct {
	Status int
	Code   string
	Hint   string
	// Fields are extra members of the JSON body.
	Fields map[string]any
	// Header holds extra response headers (e.g. Allow).
	Header http.Header

	// compile is the compile error behind a page that does not load, for
	// the source lines of the dev-mode error page.
	compile *interp.Error
	// dev is the trace of a panic or a template error, for the dev-mode
	// error page (panic.go).
	dev *devDetail
}

// NewError returns an *Error with the given status, code and hint.
func NewError(status int, code, hint string) *Error {
	return &Error{Status: status, Code: code, Hint: hint}
}

// Error returns "zealgo: <code>: <hint>".
func (e *Error) Error() string { return "zealgo: " + e.Code + ": " + e.Hint }

// body returns the JSON body of e.
func (e *Error) body() map[string]any {
	m := make(map[string]any, len(e.Fields)+2)
	for k, v := range e.Fields {
		m[k] = v
	}
	m["error"] = e.Code
	m["hint"] = e.Hint
	return m
}

// writeError sends e as the whole response, replacing anything buffered,
// in the format chosen for the request when it was routed: outside /api/
// through its publicWriter, which holds the choice between an error page
// and the JSON envelope (errorpage.go); under /api/, and before routing,
// the JSON envelope.
func writeError(w http.ResponseWriter, r *http.Request, e *Error) {
	if res, ok := w.(*Response); ok {
		res.reset()
	}
	if st := stateOf(r); st != nil && st.pages != nil {
		st.pages.writeError(w, r, e)
		return
	}
	writeJSONError(w, r, e)
}

// writeJSONError sends e as the JSON envelope {"error", "hint", ...}, or
// under /api/ as the application's error formatter shapes it
// (App.ErrorFormatter).
func writeJSONError(w http.ResponseWriter, r *http.Request, e *Error) {
	for k, v := range e.Header {
		w.Header()[k] = v
	}
	b, err := formatError(r, e)
	if err != nil {
		b = []byte(`{"error":"internal_error","hint":"the error could not be encoded"}`)
	}
	h := w.Header()
	h.Set("Content-Type", contentJSON)
	h.Del("Content-Length")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}

// formatError encodes the body of e: the error formatter's value for a
// request under /api/, if there is a formatter and its value encodes,
// else the envelope. A formatter that panics is logged and the envelope
// sent.
func formatError(r *http.Request, e *Error) (b []byte, err error) {
	if r == nil || !isAPIPath(r.URL.Path) {
		return json.Marshal(e.body())
	}
	f := errorFormat(r) // setupgen.go
	if f == nil {
		return json.Marshal(e.body())
	}
	defer func() {
		if p := recover(); p != nil {
			if st := stateOf(r); st != nil {
				st.app.log.Error("error formatter panicked", "request_id", requestID(r), "panic", interp.DescribePanic(p))
			}
			b, err = json.Marshal(e.body())
		}
	}()
	v := f(r, &Error{Status: e.Status, Code: e.Code, Hint: e.Hint, Fields: e.Fields})
	if v != nil {
		if b, err = json.Marshal(v); err == nil {
			return b, nil
		}
	}
	return json.Marshal(e.body())
}

// fail sends err: an *Error as it is, anything else as a 500
// internal_error whose cause goes to the log under the request id.
func (a *core) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := asError(err)
	if e == nil {
		id := requestID(r)
		a.log.Error("handler error", "request_id", id, "path", r.URL.Path, "err", err)
		e = internalError(id)
		a.devTemplateError(e, err)
	}
	writeError(w, r, e)
}

// internalError is the 500 a client gets for a failure whose details only
// the log holds, under the request id.
func internalError(id string) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
		Hint:   "the handler failed; the server log has the details under request_id " + id,
		Fields: map[string]any{"request_id": id}}
}

// asError returns err as an *Error if it is one, or nil.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// apiNames are the exported methods and fields of *API, the candidates of
// did_you_mean.
var apiNames = func() []string {
	t := reflect.TypeOf(&API{})
	var names []string
	for i := 0; i < t.NumMethod(); i++ {
		names = append(names, t.Method(i).Name)
	}
	st := t.Elem()
	for i := 0; i < st.NumField(); i++ {
		if f := st.Field(i); f.IsExported() {
			names = append(names, f.Name)
		}
	}
	sort.Strings(names)
	return names
}()

func errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Hint: fmt.Sprintf(format, args...)}
}
