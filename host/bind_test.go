package host_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// bindFile is a handler file whose post binds a struct with a JSON and
// form field "text" and returns what Bind returned: nil, or its error
// for the framework to answer.
const bindFile = `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var post = func(api *host.API) (any, error) {
	var in struct {
		Text string ` + "`json:\"text\" form:\"text\" validate:\"required\"`" + `
		Deep any    ` + "`json:\"deep\"`" + `
	}
	if err := api.Bind(&in); err != nil {
		return nil, err
	}
	return map[string]any{"len": len(in.Text)}, nil
}
`

// ownShapeFile answers every Bind error in its own shape, with the
// BindError's status and code inside.
const ownShapeFile = `//go:build ignore

package main

import (
	"errors"

	"github.com/zealgo/zealgo/host"
)

var post = func(api *host.API) any {
	var in struct {
		Text string ` + "`json:\"text\"`" + `
	}
	err := api.Bind(&in)
	var be *host.BindError
	if errors.As(err, &be) {
		api.Res.WriteHeader(422)
		return map[string]any{"errors": map[string]any{"body": []string{be.Code}}, "status": be.Status}
	}
	return map[string]any{"len": len(in.Text), "err": err}
}
`

// misuseFile calls Bind with what it cannot fill: the program's error,
// a 500 whose cause only the log holds.
const misuseFile = `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var post = func(api *host.API) (any, error) {
	if api.Req.Get.Has("value") {
		var s string
		return nil, api.Bind(s)
	}
	if api.Req.Get.Has("tag") {
		var in struct {
			N int ` + "`json:\"n\" validate:\"nosuchrule\"`" + `
		}
		return nil, api.Bind(&in)
	}
	var in struct {
		M map[string]string ` + "`form:\"m\"`" + `
	}
	return nil, api.Bind(&in)
}
`

// TestBindLimits: a body over MaxBodyBytes answers 413 request_too_large
// through Bind, with or without a Content-Length, JSON, form or
// multipart; JSON nested deeper than MaxInputDepth and forms with more
// fields than MaxInputFields answer 400 invalid_input; a handler that
// takes the BindError answers its own shape instead. Bind misused (no
// pointer to a struct, a field type that text cannot fill, an unknown
// validate rule) is the program's error: a 500 that names nothing of it,
// the log holds it.
func TestBindLimits(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"api/bind.go":   bindFile,
		"api/own.go":    ownShapeFile,
		"api/misuse.go": misuseFile,
	}, host.WithConfig(func(c *host.Config) {
		c.MaxBodyBytes, c.MaxInputDepth, c.MaxInputFields = 1000, 8, 10
	}))
	big := `{"text":"` + strings.Repeat("x", 2000) + `"}`
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	fw, _ := mw.CreateFormFile("text", "big.txt")
	_, _ = fw.Write([]byte(strings.Repeat("y", 2000)))
	_ = mw.Close()
	chunked := func(s string) io.Reader { return io.MultiReader(strings.NewReader(s)) } // no Content-Length
	cases := []struct {
		name, path, ctype string
		body              io.Reader
		status            int
		want              string
	}{
		{"JSON at the limit", "/api/bind", "application/json", strings.NewReader(`{"text":"` + strings.Repeat("x", 989) + `"}`), 200, `{"len":989}`},
		{"JSON over", "/api/bind", "application/json", strings.NewReader(big), 413, `"error":"request_too_large"`},
		{"chunked JSON over", "/api/bind", "application/json", chunked(big), 413, `"error":"request_too_large"`},
		{"form over", "/api/bind", "application/x-www-form-urlencoded", strings.NewReader("text=" + strings.Repeat("z", 2000)), 413, `"error":"request_too_large"`},
		{"multipart over", "/api/bind", mw.FormDataContentType(), bytes.NewReader(mp.Bytes()), 413, `"error":"request_too_large"`},
		{"JSON too deep", "/api/bind", "application/json", strings.NewReader(`{"text":"t","deep":` + strings.Repeat("[", 9) + strings.Repeat("]", 9) + `}`), 400,
			`{"error":"invalid_input","hint":"the JSON body nests deeper than 8 levels"}`},
		{"form with too many fields", "/api/bind", "application/x-www-form-urlencoded", strings.NewReader(strings.Repeat("a=1&", 11) + "text=t"), 400,
			`{"error":"invalid_input","hint":"the request body holds more than 10 fields"}`},
		{"own shape, over", "/api/own", "application/json", strings.NewReader(big), 422, `{"errors":{"body":["request_too_large"]},"status":413}`},
		{"own shape, chunked over", "/api/own", "application/json", chunked(big), 422, `{"errors":{"body":["request_too_large"]},"status":413}`},
		{"own shape, no content type", "/api/own", "", strings.NewReader(`{"text":"t"}`), 422, `{"errors":{"body":["unsupported_media_type"]},"status":415}`},
		{"own shape, fine", "/api/own", "application/json", strings.NewReader(`{"text":"t"}`), 200, `{"err":null,"len":1}`},
		{"misuse: no pointer", "/api/misuse?value", "application/json", strings.NewReader(`{}`), 500, `"error":"internal_error"`},
		{"misuse: a map from a form", "/api/misuse", "application/x-www-form-urlencoded", strings.NewReader(`m=1`), 500, `"error":"internal_error"`},
		{"misuse: an unknown rule", "/api/misuse?tag", "application/json", strings.NewReader(`{"n":1}`), 500, `"error":"internal_error"`},
		{"misuse: a map absent from the form", "/api/misuse", "application/x-www-form-urlencoded", strings.NewReader(`n=1`), 200, ``},
	}
	for _, c := range cases {
		hdr := []string{}
		if c.ctype != "" {
			hdr = []string{"Content-Type", c.ctype}
		}
		resp, body := do(t, nil, "POST", ta.srv.URL+c.path, c.body, hdr...)
		if resp.StatusCode != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want %d with %s", c.name, resp.StatusCode, body, c.status, c.want)
		}
		if strings.Contains(body, "goroutine ") || strings.Contains(body, "Bind") {
			t.Errorf("%s: the body tells the program's insides: %s", c.name, body)
		}
	}
	for _, want := range []string{"zealgo: Bind needs a non-nil pointer to a struct, not string",
		"zealgo: Bind: field M: a map[string]string cannot be filled from text",
		"zealgo: Bind: a validate tag of", "Undefined validation function 'nosuchrule' on field 'N'"} {
		if !strings.Contains(ta.logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, ta.logs.String())
		}
	}
}
