package host

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// API is the dispatcher handed to every handler (the spec's $this). By
// convention it is a handler's first parameter:
//
//	var list = func(api *host.API) any { return map[string]any{"method": api.Method()} }
type API struct {
	// Input is the cleaned input (the spec's _request): the query for GET,
	// HEAD and DELETE; query and body merged, the body winning, for POST; the
	// body alone for PUT and PATCH. Bodies may be form-encoded, multipart or
	// JSON. Strings are trimmed and stripped of HTML tags; a key given more
	// than once holds a []any. It is filled before the call when the
	// handler file names it; otherwise the body is read only if String,
	// Int, ParamsExists or a Request accessor asks for it, which fills
	// Input too.
	Input map[string]any
	// Req is the request wrapper (the spec's request).
	Req *Request
	// Res is the response wrapper (the spec's _response).
	Res *Response

	app      *App
	r        *http.Request
	g        *RequestContext
	in       *requestInput
	inputSet bool  // Input holds the parsed input
	done     bool  // a whole response was written through Response, Die or a guard
	err      error // an encoding failure inside Response

	params []routeParam // the route's parameters (Param)
}

// input returns Input, parsing the input on first use: a body that cannot
// be read or parsed ends the handler with its error.
func (a *API) input() map[string]any {
	if !a.inputSet && a.in != nil {
		a.in.must(a.in.parse())
		a.Input, a.inputSet = a.in.input, true
		if a.Req != nil && a.Req.Post == nil {
			a.Req.Post = a.in.post
		}
	}
	return a.Input
}

// Method returns the request method: GET, POST, PUT, DELETE, PATCH, HEAD or
// OPTIONS.
func (a *API) Method() string { return a.r.Method }

// ParamsExists reports whether every name is present in the query, the form
// fields or the JSON body of the request.
func (a *API) ParamsExists(names ...string) bool {
	in := a.input()
	for _, n := range names {
		if _, ok := in[n]; ok {
			continue
		}
		if a.Req.Get.Has(n) || a.Req.post().Has(n) {
			continue
		}
		return false
	}
	return true
}

// Response sends data with the given status, encoded as a returned value
// would be (map to JSON, string to HTML, ...), replacing whatever was
// buffered. The handler should return nil after it. A status of 0 keeps the
// status set so far.
func (a *API) Response(data any, status int) {
	a.Res.reset()
	if status != 0 {
		a.Res.WriteHeader(status)
	}
	if err := writeResult(a.Res, a.r, data); err != nil && a.err == nil {
		a.err = err
	}
	a.done = true
}

// Die ends the request with an error response (the spec's die). An *Error
// is sent as it is; any other error is logged with the request id and sent
// as a 500 internal_error that does not reveal it. The handler should return
// after it.
func (a *API) Die(err error) {
	if err == nil {
		return
	}
	rtOf(a.app).fail(a.Res, a.r, err)
	a.done = true
}

// SetContentType sets the Content-Type of the response. The return
// contract keeps it instead of its own default.
func (a *API) SetContentType(t string) { a.Res.Header().Set("Content-Type", t) }

// G returns the per-request context (the spec's G::instance()): query,
// form fields, cookies and server variables.
func (a *API) G() *RequestContext {
	if a.g == nil {
		g := contextOf(a.r) // not RequestContextOf: G reads no body (input.go)
		if g == nil {
			g = newRequestContext(a.app, a.r, nil)
		}
		if a.Req != nil && a.Req.Post != nil {
			g.Post = a.Req.Post
			g.postRead = true
		}
		g.Session.bind(a.Res)
		a.g = g
	}
	return a.g
}

// App returns the application.
func (a *API) App() *App { return a.app }

// Context returns the request's context, done when the client goes away.
func (a *API) Context() context.Context { return a.r.Context() }

// RequestID returns the id of the request, as sent in the X-Request-Id
// response header and written in the log.
//
//go:noinline
func (a *API) RequestID() string { return requestID(a.r) }

// Task dispatches t as App().Server().Task does, with the request's id
// attached: the task sees it in TaskInfo.RequestID and its log records
// carry it as request_id.
func (a *API) Task(t Task) (int64, error) { return a.app.server.TaskContext(a.r.Context(), t) }

// String returns the input value name as a string, or "" if it is absent.
func (a *API) String(name string) string {
	switch v := a.input()[name].(type) {
	case nil:
		return ""
	case string:
		return v
	case []any:
		if len(v) > 0 {
			return fmt.Sprint(v[0])
		}
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// Int returns the input value name as an int, and whether it is present
// and a whole number.
func (a *API) Int(name string) (int, bool) {
	s := strings.TrimSpace(a.String(name))
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// IsAuthenticated reports what the application's auth checker says of this
// request; when none is registered, whether the jwt alias verified a token
// for it.
func (a *API) IsAuthenticated() bool {
	f := regOf(a.app).hooks.auth
	if f == nil {
		return tokenOf(a.r) != nil
	}
	return f(a.G())
}

// IsAdmin reports what the application's admin checker says of this
// request; false when none is registered.
func (a *API) IsAdmin() bool {
	f := regOf(a.app).hooks.admin
	return f != nil && f(a.G())
}

// Username returns what the application's username provider says of this
// request; when none is registered, the claim of the token the jwt alias
// verified ("sub" unless the alias names another), or "", false.
func (a *API) Username() (string, bool) {
	f := regOf(a.app).hooks.username
	if f == nil {
		t := tokenOf(a.r)
		return tokenUser(t), t != nil && t.user != ""
	}
	return f(a.G())
}

// RequirePostAuth is a guard: the request must be a POST by an
// authenticated caller. Otherwise it sends 403 {"error":"unauthorized"} and
// returns false, and the handler must return.
func (a *API) RequirePostAuth() bool {
	if a.r.Method == http.MethodPost && a.IsAuthenticated() {
		return true
	}
	hint := "this endpoint needs an authenticated POST request"
	if a.r.Method != http.MethodPost {
		hint = "this endpoint accepts only POST requests by an authenticated caller"
	}
	writeError(a.Res, a.r, &Error{Status: http.StatusForbidden, Code: CodeUnauthorized, Hint: hint})
	a.done = true
	return false
}

// ClientIP returns the address of the client (host.ClientIP).
func (a *API) ClientIP() string { return ClientIP(a.r) }

// inject returns the value of a handler parameter of kind k; a function,
// not a method of API, whose signature would make every handler file's
// package read package reflect (see rtOf).
func inject(a *API, k argKind, zero reflect.Value) reflect.Value {
	switch k {
	case argAPI:
		return reflect.ValueOf(a)
	case argRequest:
		return reflect.ValueOf(a.Req)
	case argResponse:
		return reflect.ValueOf(a.Res)
	case argApp:
		return reflect.ValueOf(a.app)
	case argServer:
		return reflect.ValueOf(a.app.server)
	case argContext:
		return reflect.ValueOf(a.G())
	case argGoContext:
		return reflect.ValueOf(a.r.Context())
	case argDB:
		return reflect.ValueOf(rtOf(a.app).db.pool)
	}
	return zero // argZero, or argProvided with the provided value
}
