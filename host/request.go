package host

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// Request is the request wrapper handed to handlers (the spec's $request).
type Request struct {
	// Get is the parsed query string (the spec's ->get).
	Get url.Values
	// Post holds the fields of a form-encoded or multipart body. It is
	// filled before the call when the handler file names it (Post), else
	// nil until an accessor (Field, File, API.String, ...) reads the body.
	Post url.Values
	// Header holds the request headers.
	Header http.Header
	// Parent is the underlying *http.Request. Its body is bounded by
	// Config.MaxBodyBytes and Config.BodyTimeout; once an accessor has
	// read the body, Parent.Body reads it again from the start.
	Parent *http.Request

	in *requestInput
}

// Method returns the request method.
func (r *Request) Method() string { return r.Parent.Method }

// Body returns the raw body of a POST, PUT or PATCH request, read on the
// first call (nil for other methods). It can be called any number of times.
func (r *Request) Body() []byte {
	if r.in == nil {
		return nil
	}
	r.in.must(r.in.readBody())
	return r.in.body
}

// post returns Post, parsing the body on first use.
func (r *Request) post() url.Values {
	if r.Post == nil && r.in != nil {
		r.in.must(r.in.parse())
		r.Post = r.in.post
	}
	return r.Post
}

// File returns the uploaded file of the multipart field name, or nil. Files
// larger than 32 MiB wait in temporary files, removed when the request ends.
func (r *Request) File(name string) *multipart.FileHeader {
	r.post()
	if f := r.Parent.MultipartForm; f != nil && len(f.File[name]) > 0 {
		return f.File[name][0]
	}
	return nil
}

// Field returns the body field name as the client sent it: a form field
// (url-encoded or multipart) or a string member of a JSON object body,
// neither trimmed nor stripped of tags, unlike API.Input. Use it for
// passwords and for text the user typed that must be kept as written
// (escape it when you render it). It never reads the query string, so that
// credentials do not travel in URLs; it returns "" when the field is absent.
func (r *Request) Field(name string) string {
	if v, ok := r.post()[name]; ok && len(v) > 0 {
		return v[0]
	}
	body := r.Body()
	if len(body) == 0 || !isJSONType(r.Header.Get("Content-Type")) {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(obj[name], &s) != nil {
		return ""
	}
	return s
}

// isJSONType reports whether contentType is application/json or a
// +json media type. The type the return contract sends is recognized
// without parsing.
func isJSONType(contentType string) bool {
	if contentType == contentJSON {
		return true
	}
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
	// Post holds the fields of a form-encoded
	// (application/x-www-form-urlencoded) or multipart (multipart/form-data)
	// body of a POST, PUT or PATCH request, as the handler's input step
	// parses them; the file parts of a multipart body are not in it, nor is a
	// JSON body (see API.Input and Request.Field). In a handler, API.G fills
	// it for a file that names Post (input.go); it reads no body itself.
	//
	// Middleware sees the fields too, without taking the body from the
	// handler: the first RequestContextOf call of a request reads the body,
	// at most Config.MaxBodyBytes of it, and puts it back whole, so that the
	// handler reads the same bytes. A body over that limit, or one that
	// cannot be read or parsed, leaves Post empty in middleware, and the
	// handler's input step answers for it as usual, if the handler reads
	// its input (413 request_too_large, 400 invalid_body). Middleware that replaces the request body should
	// do so before calling RequestContextOf. Called for the first time after
	// the handler has read its input, RequestContextOf does not read the
	// body again: Post then holds what the handler's API.G gave it, if it
	// called it.
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

	app      *App
	postRead bool       // Post holds the body's fields, or reading them was tried
	token    *tokenInfo // what the jwt alias verified (jwt.go)
}

// RequestContextOf returns the RequestContext of a request served by a
// zealgo application, the same instance that API.G returns to its handler
// and the auth callbacks receive: middleware reads and changes the session
// through it, and reads the form fields of the body in Post (the first
// call reads the body and puts it back for the handler; see
// RequestContext.Post). It returns nil for a request that did not come
// through an App. (API.Context is another thing: the request's
// context.Context.)
func RequestContextOf(r *http.Request) *RequestContext {
	g := contextOf(r)
	if g != nil && !g.postRead {
		g.postRead = true
		// Once the handler's input step has read the body (readBody left
		// its mark), API.G gives the context the fields it parsed.
		if _, parsed := r.Body.(*readCloser); !parsed {
			for k, v := range formFields(r, g.app.cfg.MaxBodyBytes) {
				g.Post[k] = v
			}
		}
	}
	return g
}

// contextOf is RequestContextOf without reading the body, for API.G and
// the session store.
func contextOf(r *http.Request) *RequestContext {
	st := stateOf(r)
	if st == nil || st.app == nil {
		return nil
	}
	if st.g == nil {
		st.g = newRequestContext(st.app.app, r, nil)
	}
	return st.g
}

// formFields returns the form fields of r's body as parseInput will find
// them, for middleware that runs before it: only for POST, PUT and PATCH
// with a form-encoded or multipart body of at most limit bytes. It reads
// the body through bufferBody, which puts it back whole. It returns nil when
// there is nothing to read, or nothing that parses.
func formFields(r *http.Request, limit int64) url.Values {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return nil
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" && mt != "multipart/form-data" {
		return nil
	}
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength > limit {
		return nil
	}
	body, ok := bufferBody(r, limit)
	if !ok || len(body) == 0 {
		return nil
	}
	if mt == "multipart/form-data" {
		return multipartFields(body, params["boundary"])
	}
	vals, err := url.ParseQuery(string(body))
	if err != nil {
		return nil
	}
	return vals
}

// multipartFields returns the values of the parts of a multipart body that
// are no files, as mime/multipart's ReadForm (behind parseInput) puts them
// in Form.Value; file parts are skipped without being stored. It returns
// nil for a body that ReadForm would refuse.
func multipartFields(body []byte, boundary string) url.Values {
	if boundary == "" {
		return nil
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	vals := url.Values{}
	for parts := 0; ; parts++ {
		p, err := mr.NextPart()
		if err == io.EOF {
			return vals
		}
		if err != nil || parts >= 1000 { // ReadForm's default part limit
			return nil
		}
		name := p.FormName()
		if name == "" || p.FileName() != "" {
			continue
		}
		v, err := io.ReadAll(p)
		if err != nil {
			return nil
		}
		vals[name] = append(vals[name], string(v))
	}
}

// bufferBody reads at most limit bytes of r's body ahead of the handler and
// gives r a body that replays them, followed by whatever the original body
// still holds, so that the next reader reads the body as it came: whole,
// or with the same error or excess that made this read stop. ok reports
// whether the whole body was read within limit.
func bufferBody(r *http.Request, limit int64) (b []byte, ok bool) {
	orig := r.Body
	b, err := io.ReadAll(io.LimitReader(orig, limit+1))
	r.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(b), orig), orig: orig}
	return b, err == nil && int64(len(b)) <= limit
}

// replayBody is a request body read ahead by bufferBody.
type replayBody struct {
	io.Reader
	orig io.ReadCloser
}

func (b *replayBody) Close() error { return b.orig.Close() }

// newRequestContext builds the context of r; post may be nil.
func newRequestContext(app *App, r *http.Request, post url.Values) *RequestContext {
	g := &RequestContext{Get: r.URL.Query(), Post: post, Cookies: map[string]string{},
		Server: serverVars(r), Request: r, app: app}
	g.Session = &Session{r: r}
	if st := stateOf(r); st != nil {
		g.Session.res = st.res
	}
	if app != nil {
		g.Session.m, g.Session.log = rtOf(app).sessions, app.log
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
// fresh reader back, so that the body can be read again. The reader is a
// *readCloser, which tells RequestContextOf that the input step has read
// the body.
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
	r.Body = nopBody(b)
	return b, nil
}
