package host

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// Request is the request wrapper handed to handlers (the spec's $request).
type Request struct {
	// Get is the parsed query string (the spec's ->get).
	Get url.Values
	// Post holds the fields of a form-encoded or multipart body.
	Post url.Values
	// Header holds the request headers.
	Header http.Header
	// Parent is the underlying *http.Request.
	Parent *http.Request

	body []byte
}

// Method returns the request method.
func (r *Request) Method() string { return r.Parent.Method }

// Body returns the raw request body. It can be read any number of times.
func (r *Request) Body() []byte { return r.body }

// Field returns the body field name as the client sent it: a form field
// (url-encoded or multipart) or a string member of a JSON object body,
// neither trimmed nor stripped of tags, unlike API.Input. Use it for
// passwords and for text the user typed that must be kept as written
// (escape it when you render it). It never reads the query string, so that
// credentials do not travel in URLs; it returns "" when the field is absent.
func (r *Request) Field(name string) string {
	if v, ok := r.Post[name]; ok && len(v) > 0 {
		return v[0]
	}
	if len(r.body) == 0 || !isJSONType(r.Header.Get("Content-Type")) {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(r.body, &obj) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(obj[name], &s) != nil {
		return ""
	}
	return s
}

// isJSONType reports whether contentType is application/json or a
// +json media type.
func isJSONType(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// Cookie returns the value of the named cookie, or "" if there is none.
func (r *Request) Cookie(name string) string {
	c, err := r.Parent.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// Cookies returns the cookies of the request.
func (r *Request) Cookies() []*http.Cookie { return r.Parent.Cookies() }

// RequestContext is the per-request context (the spec's G::instance()),
// obtained through API.G and handed to the authentication callbacks.
type RequestContext struct {
	// Get is the parsed query string.
	Get url.Values
	// Post holds the fields of a form-encoded or multipart body.
	Post url.Values
	// Cookies maps cookie names to values.
	Cookies map[string]string
	// Server holds CGI-style server variables: REQUEST_METHOD, REQUEST_URI,
	// QUERY_STRING, REMOTE_ADDR, SERVER_PROTOCOL, HTTPS, and HTTP_* for each
	// request header.
	Server map[string]string
	// Request is the underlying *http.Request.
	Request *http.Request
	// Session is the session of the request, loaded on first use and saved
	// just before the response header is sent.
	Session *Session

	app *App
}

// Context returns the context of a request served by a zealgo application,
// the same instance that API.G returns to its handler and the auth
// callbacks receive: middleware reads and changes the session through it.
// Its Post is empty until the handler's input has been parsed. It returns
// nil for a request that did not come through an App.
func Context(r *http.Request) *RequestContext {
	st := stateOf(r)
	if st == nil || st.app == nil {
		return nil
	}
	if st.g == nil {
		st.g = newRequestContext(st.app, r, nil)
	}
	return st.g
}

// newRequestContext builds the context of r; post may be nil.
func newRequestContext(app *App, r *http.Request, post url.Values) *RequestContext {
	g := &RequestContext{Get: r.URL.Query(), Post: post, Cookies: map[string]string{},
		Server: serverVars(r), Request: r, app: app}
	g.Session = &Session{r: r, st: stateOf(r)}
	if app != nil {
		g.Session.m = app.sessions
	}
	if g.Post == nil {
		g.Post = url.Values{}
	}
	for _, c := range r.Cookies() {
		g.Cookies[c.Name] = c.Value
	}
	return g
}

func serverVars(r *http.Request) map[string]string {
	s := map[string]string{
		"REQUEST_METHOD":  r.Method,
		"REQUEST_URI":     r.RequestURI,
		"QUERY_STRING":    r.URL.RawQuery,
		"REMOTE_ADDR":     r.RemoteAddr,
		"SERVER_PROTOCOL": r.Proto,
		"HTTP_HOST":       r.Host,
		"PATH_INFO":       r.URL.Path,
	}
	if r.TLS != nil {
		s["HTTPS"] = "on"
	}
	for k, v := range r.Header {
		s["HTTP_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))] = strings.Join(v, ", ")
	}
	return s
}

// readBody reads at most limit bytes of r's body into memory and puts a
// fresh reader back, so that the body can be read again.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooLarge
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, nil
}
