package host

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo-contrib/session"
	"github.com/labstack/echo/v4"
)

// EchoMiddleware adapts an Echo middleware to the standard
// func(http.Handler) http.Handler that Use, MiddlewareAlias factories and
// handler files' middleware lists take:
//
//	app.Use(host.EchoMiddleware(middleware.Secure()))
//
// Each request gets an echo.Context of its own whose RealIP is ClientIP:
// the peer address, or X-Forwarded-For only from the trusted proxies of
// Config.TrustedProxies. An error the Echo middleware
// returns instead of calling next (an *echo.HTTPError such as 401, 413 or
// 429) is answered as zealgo answers errors: the JSON envelope
// {"error": ..., "hint": ...}, or outside /api/ an error page for a client
// that does not prefer JSON.
// Inside a zealgo application the context also carries the application's
// session store, so that echo-contrib's session.Get works in the adapted
// middleware and sees the same session as the handler.
func EchoMiddleware(mw echo.MiddlewareFunc) func(http.Handler) http.Handler {
	e := echo.New()
	e.Logger.SetOutput(io.Discard)
	e.IPExtractor = ClientIP
	e.HTTPErrorHandler = func(err error, c echo.Context) { writeEchoError(c, err) }
	return func(next http.Handler) http.Handler {
		h := mw(func(c echo.Context) error {
			next.ServeHTTP(c.Response(), c.Request())
			return nil
		})
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c := e.NewContext(r, w)
			run := h
			if st := stateOf(r); st != nil && st.app != nil && st.app.sessions != nil {
				run = session.Middleware(st.app.sessions.Store())(h)
			}
			if err := run(c); err != nil {
				writeEchoError(c, err)
			}
		})
	}
}

// writeEchoError answers err, returned by an Echo middleware, through
// writeError, unless a response has begun.
func writeEchoError(c echo.Context, err error) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if !errors.As(err, &he) {
		he = echo.NewHTTPError(http.StatusInternalServerError, "the request could not be handled")
	}
	code := strings.ReplaceAll(strings.ToLower(http.StatusText(he.Code)), " ", "_")
	switch he.Code {
	case http.StatusRequestEntityTooLarge:
		code = CodeRequestEntityLarge
	case http.StatusNotFound:
		code = CodeNotFound
	}
	if code == "" {
		code = "error"
	}
	msg, ok := he.Message.(string)
	if !ok || msg == "" {
		msg = strings.ToLower(http.StatusText(he.Code))
	}
	writeError(c.Response(), c.Request(), errorf(he.Code, code, "%s", msg))
}
