package host

import (
	"errors"
	"fmt"
	"net/http"
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

// codeServiceUnavailable is the error code of a request past its limit
// (exectime.go) and of a WebSocket handshake while the server drains
// (websocket.go).
const codeServiceUnavailable = "service_unavailable"

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

	// compile is the compile error (an *interp.Error) behind a page that
	// does not load, for the source lines of the dev-mode error page; an
	// error, not an *interp.Error, for what a handler's package compiles
	// (see rtOf).
	compile error
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

func errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Hint: fmt.Sprintf(format, args...)}
}

// devDetail is what the dev-mode error page shows of a panic or a
// template error: a title and, for each frame, where and the source lines
// around it.
type devDetail struct {
	Title  string
	Frames []devFrame
}

type devFrame struct {
	Where string     // "file:line func"; empty when the title says it
	Src   *devSource // nil for a compiled frame
}

// devSource holds the source lines around a compile error; the page
// shows them under the error's hint (file:line:col: message).
type devSource struct {
	Lines []devLine
}

type devLine struct {
	N     int
	Text  string
	Hot   bool
	Caret string // spaces up to the column, on the offending line
}
