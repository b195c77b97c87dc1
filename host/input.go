package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// Input is read lazily. A handler call gets a requestInput that reads the
// body (at most Config.MaxBodyBytes of it) only when something asks for it:
// API.String, Int, ParamsExists, Request.Field, Body and File. The fields
// that hold input (API.Input, Request.Post, RequestContext.Post, and the
// Form, PostForm and MultipartForm of the *http.Request) cannot be filled
// on first use, so a file that names one of them has its input parsed
// before the call (needsInput, handler.go). A handler that reads none of
// them costs nothing for its body, however large. When the body cannot be
// read or parsed, the accessor ends the handler (inputAbort) and the
// request gets the error: 413 request_too_large, 408 request_timeout or
// 400 invalid_body.

var errTooLarge = errors.New("zealgo: request body too large")

// maxMemory is how much of a multipart body is held in memory; the rest of
// its files go to temporary files, removed when the request ends.
const maxMemory = 32 << 20

// requestInput is the input of one handler call, read and parsed on first
// use.
type requestInput struct {
	r     *http.Request
	query url.Values
	cfg   *Config

	read   bool // readBody ran
	parsed bool // parse ran
	body   []byte
	post   url.Values     // form fields of the body
	input  map[string]any // API.Input
	err    *Error         // why the input could not be read or parsed
	handed bool           // API.Bind returned err to the handler, which answers for it
}

// inputAbort is the panic with which an input accessor ends a handler
// whose input cannot be read; invoke answers with e. Its Error text is that
// of http.ErrAbortHandler, the one panic Yaegi does not print when it
// unwinds interpreted frames: a bad body is the client's fault, not a
// crash worth a log line.
type inputAbort struct{ e *Error }

func (inputAbort) Error() string { return http.ErrAbortHandler.Error() }

// init prepares the input of r. A body is bounded by MaxBodyBytes for
// every reader, the handler's own included.
func (in *requestInput) init(r *http.Request, query url.Values, cfg *Config) {
	in.r, in.query, in.cfg = r, query, cfg
	if r.Body != nil && r.Body != http.NoBody && cfg.MaxBodyBytes > 0 {
		r.Body = &limitedBody{ReadCloser: r.Body, left: cfg.MaxBodyBytes}
	}
}

// close removes the temporary files of a multipart body, whoever parsed
// it: net/http removes only those of the request it handed out, not of the
// copies made below it.
func (in *requestInput) close() {
	if in.r != nil && in.r.MultipartForm != nil {
		_ = in.r.MultipartForm.RemoveAll()
	}
}

// must ends the handler when e is set.
func (in *requestInput) must(e *Error) {
	if e != nil {
		panic(inputAbort{e})
	}
}

// hasBody reports whether the method's input comes from the body.
func (in *requestInput) hasBody() bool {
	switch in.r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return true
	}
	return false
}

// readBody reads the body once, for POST, PUT and PATCH, and puts a
// reader of the same bytes back on the request.
func (in *requestInput) readBody() *Error {
	if in.read {
		return in.err
	}
	in.read = true
	if !in.hasBody() {
		return nil
	}
	body, err := readBody(in.r, in.cfg.MaxBodyBytes)
	switch {
	case errors.Is(err, errTooLarge):
		in.err = errorf(http.StatusRequestEntityTooLarge, CodeRequestEntityLarge,
			"the request body is larger than %d bytes", in.cfg.MaxBodyBytes)
	case errors.Is(err, errBodyTimeout):
		in.err = errorf(http.StatusRequestTimeout, CodeRequestTimeout,
			"the request body stalled for longer than %s", in.cfg.BodyTimeout)
	case err != nil:
		in.err = errorf(http.StatusBadRequest, CodeInvalidBody, "the request body could not be read")
	}
	in.body = body
	return in.err
}

// parse reads and cleans the input as DESIGN.md says: the query for GET,
// HEAD and DELETE; query and body merged (body wins) for POST; the body
// alone for PUT and PATCH. Bodies may be form-encoded, multipart or JSON.
// Strings are trimmed and stripped of HTML tags.
func (in *requestInput) parse() *Error {
	if in.parsed {
		return in.err
	}
	in.parsed = true
	in.input, in.post = map[string]any{}, url.Values{}
	if in.r.Method != http.MethodPut && in.r.Method != http.MethodPatch {
		for k, v := range in.query {
			in.input[k] = cleanValues(v)
		}
	}
	if e := in.readBody(); e != nil || len(in.body) == 0 {
		return e
	}
	in.err = in.parseBody()
	return in.err
}

// parseBody parses the body by its Content-Type into post and input.
func (in *requestInput) parseBody() *Error {
	mt, _, _ := mime.ParseMediaType(in.r.Header.Get("Content-Type"))
	switch {
	case mt == "application/x-www-form-urlencoded":
		if n := bytes.Count(in.body, []byte("&")) + 1; n > in.cfg.MaxInputFields {
			return tooManyFields(in.cfg.MaxInputFields)
		}
		vals, err := url.ParseQuery(string(in.body))
		if err != nil {
			return errorf(http.StatusBadRequest, CodeInvalidBody, "the form body is malformed: %v", err)
		}
		in.post = vals
	case mt == "multipart/form-data":
		if e := in.parseMultipart(); e != nil {
			return e
		}
	case isJSONType(mt):
		return in.parseJSON()
	}
	for k, v := range in.post {
		in.input[k] = cleanValues(v)
	}
	return nil
}

// parseMultipart parses a multipart body on the request itself, so that
// FormFile and MultipartForm serve the handler, and its temporary files
// are removed by close.
func (in *requestInput) parseMultipart() *Error {
	r := in.r
	if err := r.ParseMultipartForm(maxMemory); err != nil {
		return errorf(http.StatusBadRequest, CodeInvalidBody, "the multipart body is malformed: %v", err)
	}
	r.Body = nopBody(in.body)
	if r.MultipartForm == nil {
		return nil
	}
	n := 0
	for _, v := range r.MultipartForm.Value {
		n += len(v)
	}
	if n > in.cfg.MaxInputFields {
		return tooManyFields(in.cfg.MaxInputFields)
	}
	in.post = url.Values(r.MultipartForm.Value)
	return nil
}

// parseJSON decodes a JSON body, after a pass that checks its nesting and
// its number of object members, and cleans its strings.
func (in *requestInput) parseJSON() *Error {
	depth, members := jsonShape(in.body)
	if depth > in.cfg.MaxInputDepth {
		return errorf(http.StatusBadRequest, CodeInvalidBody,
			"the JSON body nests deeper than %d levels", in.cfg.MaxInputDepth)
	}
	if members > in.cfg.MaxInputFields {
		return tooManyFields(in.cfg.MaxInputFields)
	}
	dec := json.NewDecoder(bytes.NewReader(in.body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return errorf(http.StatusBadRequest, CodeInvalidBody, "the JSON body is malformed: %v", err)
	}
	if obj, ok := v.(map[string]any); ok {
		for k, x := range obj {
			in.input[k] = clean(x)
		}
	}
	return nil
}

func tooManyFields(limit int) *Error {
	return errorf(http.StatusBadRequest, CodeInvalidBody, "the request body holds more than %d fields", limit)
}

// jsonShape returns how deep the arrays and objects of the JSON text b
// nest and how many object members it holds, in one pass over its bytes.
// Malformed text gets numbers all the same; the decoder refuses it after.
func jsonShape(b []byte) (depth, members int) {
	level, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			level++
			depth = max(depth, level)
		case c == '}' || c == ']':
			level--
		case c == ':':
			members++
		}
	}
	return depth, members
}

func nopBody(b []byte) *readCloser { return &readCloser{bytes.NewReader(b)} }

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// limitedBody is a request body that fails with errTooLarge past its
// limit, for whoever reads it.
type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body at the limit from one past it.
		var one [1]byte
		if n, _ := b.ReadCloser.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// cleanValues turns one form or query key's values into an Input value: a
// string for one value, a []any of strings for several.
func cleanValues(v []string) any {
	if len(v) == 1 {
		return cleanString(v[0])
	}
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = cleanString(s)
	}
	return out
}

// clean cleans every string inside a decoded JSON value.
func clean(v any) any {
	switch x := v.(type) {
	case string:
		return cleanString(x)
	case map[string]any:
		for k, e := range x {
			x[k] = clean(e)
		}
	case []any:
		for i, e := range x {
			x[i] = clean(e)
		}
	}
	return v
}

// cleanString trims s and strips it of HTML tags and comments, keeping
// the text between them as written. The tokenizer reads s once: the cost
// is linear in its length.
func cleanString(s string) string {
	if strings.IndexByte(s, '<') < 0 {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(b.String())
		case html.TextToken:
			b.Write(z.Raw())
		}
	}
}
