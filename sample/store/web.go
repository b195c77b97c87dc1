package store

import (
	"mime"
	"strings"

	"github.com/zealgo/zealgo/host"
)

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
