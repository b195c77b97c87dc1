package store

import (
	"encoding/json"
	"mime"
	"strings"

	"github.com/zealgo/zealgo/host"
)

// Field returns the body field name of a POST, PUT or PATCH request as the
// client sent it: a form field (url-encoded or multipart) or a string
// member of a JSON object, neither trimmed nor stripped of tags, unlike
// api.Input. Use it for passwords. It never reads the query string, so
// credentials do not travel in URLs; "" when absent.
func Field(req *host.Request, name string) string {
	if req == nil {
		return ""
	}
	if v, ok := req.Post[name]; ok && len(v) > 0 {
		return v[0]
	}
	if !isJSON(req.Header.Get("Content-Type")) {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(req.Body(), &obj) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(obj[name], &s) != nil {
		return ""
	}
	return s
}

// WantsJSON reports whether the client asked for JSON rather than HTML: it
// sent a JSON body, or its Accept header names application/json and not
// text/html. Browsers' form posts want HTML.
func WantsJSON(req *host.Request) bool {
	if req == nil {
		return false
	}
	if isJSON(req.Header.Get("Content-Type")) {
		return true
	}
	accept := strings.ToLower(strings.Join(req.Header.Values("Accept"), ","))
	return strings.Contains(accept, "json") && !strings.Contains(accept, "text/html")
}

// WantsHTML reports whether the client is a browser that asked for HTML:
// its Accept header names text/html and it sent no JSON body. A JSON API
// answers such a form post with a redirect instead of JSON.
func WantsHTML(req *host.Request) bool {
	if req == nil || isJSON(req.Header.Get("Content-Type")) {
		return false
	}
	return strings.Contains(strings.ToLower(strings.Join(req.Header.Values("Accept"), ",")), "text/html")
}

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
