package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

var errTooLarge = errors.New("zealgo: request body too large")

// maxMemory is how much of a multipart body is held in memory; the rest of
// its files go to temporary files.
const maxMemory = 32 << 20

// parsedInput is what the input-cleaning step makes of a request.
type parsedInput struct {
	input map[string]any // API.Input
	post  url.Values     // form fields of the body
	body  []byte
}

// parseInput reads and cleans the input of r as DESIGN.md says: the query
// for GET, HEAD and DELETE; query and body merged (body wins) for POST; the
// body alone for PUT and PATCH. Bodies may be form-encoded, multipart or
// JSON. Strings are trimmed and stripped of HTML tags.
func parseInput(p *parsedInput, r *http.Request, query url.Values, limit int64) *Error {
	*p = parsedInput{input: map[string]any{}, post: url.Values{}}
	withQuery, withBody := true, false
	switch r.Method {
	case http.MethodPost:
		withBody = true
	case http.MethodPut, http.MethodPatch:
		withQuery, withBody = false, true
	}
	if withQuery {
		for k, v := range query {
			p.input[k] = cleanValues(v)
		}
	}
	if !withBody {
		return nil
	}
	body, err := readBody(r, limit)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return errorf(http.StatusRequestEntityTooLarge, CodeRequestEntityLarge,
				"the request body is larger than %d bytes", limit)
		}
		return errorf(http.StatusBadRequest, CodeInvalidBody, "the request body could not be read")
	}
	p.body = body
	if len(body) == 0 {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == "application/x-www-form-urlencoded":
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return errorf(http.StatusBadRequest, CodeInvalidBody, "the form body is malformed: %v", err)
		}
		p.post = vals
	case mt == "multipart/form-data":
		if err := r.ParseMultipartForm(maxMemory); err != nil {
			return errorf(http.StatusBadRequest, CodeInvalidBody, "the multipart body is malformed: %v", err)
		}
		if r.MultipartForm != nil {
			p.post = url.Values(r.MultipartForm.Value)
		}
		r.Body = nopBody(body)
	case isJSONType(mt):
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return errorf(http.StatusBadRequest, CodeInvalidBody, "the JSON body is malformed: %v", err)
		}
		if obj, ok := v.(map[string]any); ok {
			for k, x := range obj {
				p.input[k] = clean(x)
			}
		}
		return nil
	}
	for k, v := range p.post {
		p.input[k] = cleanValues(v)
	}
	return nil
}

func nopBody(b []byte) *readCloser { return &readCloser{bytes.NewReader(b)} }

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

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
// the text between them as written.
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
