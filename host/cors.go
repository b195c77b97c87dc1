package host

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v5/middleware"
)

// Allowed origins: one setting (Config.AllowOrigins, the serve flag
// --allow-origin, App.AllowOrigins in setup.go or a compiled main) for a
// front end served from another origin. For those origins the
// application answers CORS (preflight included, with credentials) before
// anything else, and trusts them for the cross-origin protection of
// unsafe methods (edge.go), which otherwise refuses a browser's POST from
// another origin.

// corsMaxAge is how long, in seconds, a browser may keep a preflight's
// answer.
const corsMaxAge = 600

// corsExposed are the response headers a script of an allowed origin may
// read besides the CORS-safelisted ones.
var corsExposed = []string{"X-Request-Id", "Location", "Retry-After", "Allow"}

// allowOrigins wraps h in CORS for origins, if there are any: a preflight
// (OPTIONS with Origin and Access-Control-Request-Method) from one of
// them is answered 204 with the methods, the headers it asked for and
// credentials allowed; any other request from one of them gets
// Access-Control-Allow-Origin (its origin, with Vary: Origin) and
// Access-Control-Allow-Credentials. A request from any other origin gets
// no CORS header, so that the browser keeps the answer from the page.
func allowOrigins(h http.Handler, origins []string) http.Handler {
	if len(origins) == 0 {
		return h
	}
	cors := EchoMiddleware(middleware.CORSWithConfig(middleware.CORSConfig{AllowOrigins: origins, AllowCredentials: true,
		MaxAge: corsMaxAge, ExposeHeaders: corsExposed}))(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") == "" { // no browser's cross-origin request: as without CORS
			h.ServeHTTP(w, r)
			return
		}
		cors.ServeHTTP(w, r)
	})
}

// cleanOrigins returns the allowed origins trimmed (a trailing slash
// dropped), or the error naming the first that is no origin.
func cleanOrigins(origins []string) ([]string, error) {
	var clean []string
	for _, o := range origins {
		o = strings.TrimSuffix(strings.TrimSpace(o), "/")
		if err := checkOrigin(o); err != nil {
			return nil, err
		}
		clean = append(clean, o)
	}
	return clean, nil
}

// checkOrigin refuses what is no origin: scheme://host[:port], with no
// path, query or wildcard.
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil ||
		strings.Contains(o, "*") {
		return fmt.Errorf("zealgo: allowed origin %q is no origin such as https://app.example or http://localhost:5173 "+
			"(a scheme and a host, an optional port, no path or wildcard)", o)
	}
	return nil
}
