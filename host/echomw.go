package host

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v5"
)

// EchoMiddleware adapts an Echo middleware to the standard
// func(http.Handler) http.Handler that Use, MiddlewareAlias factories and
// handler files' middleware lists take:
//
//	app.Use(host.EchoMiddleware(middleware.Secure()))
//
// Each request gets an *echo.Context of its own whose RealIP is ClientIP:
// the peer address, or X-Forwarded-For only from the trusted proxies of
// Config.TrustedProxies. An error the Echo middleware
// returns instead of calling next (an *echo.HTTPError such as 401, 413 or
// 429) is answered as zealgo answers errors: the JSON envelope
// {"error": ..., "hint": ...}, or outside /api/ an error page for a client
// that does not prefer JSON.
// Inside a zealgo application the context also carries the application's
// session store (a gorilla sessions.Store) under the key "_session_store",
// where echo-contrib/v5's session.Get looks for it, so that the adapted
// middleware sees the same session as the handler.
//
// mw is an Echo v5 middleware (github.com/labstack/echo/v5): one written
// for Echo v4 takes a *echo.Context instead of an echo.Context, and
// echo-contrib's v4 packages must be replaced by their v5 releases
// (docs/upgrading.md).
func EchoMiddleware(mw echo.MiddlewareFunc) func(http.Handler) http.Handler {
	e := echo.New()
	e.Logger = discardLog
	e.IPExtractor = ClientIP
	e.HTTPErrorHandler = writeEchoError
	return func(next http.Handler) http.Handler {
		h := mw(func(c *echo.Context) error {
			next.ServeHTTP(c.Response(), c.Request())
			return nil
		})
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c := e.NewContext(r, w)
			if st := stateOf(r); st != nil && st.app != nil && st.app.sessions != nil {
				c.Set(echoSessionKey, st.app.sessions.Store())
			}
			if err := h(c); err != nil {
				writeEchoError(c, err)
			}
		})
	}
}

// echoSessionKey is the context key under which echo-contrib/v5's session
// middleware keeps the store, and where its session.Get looks.
const echoSessionKey = "_session_store"

// discardLog is the logger of the Echo instances host makes: zealgo logs
// what matters itself.
var discardLog = slog.New(slog.DiscardHandler)

// writeEchoError answers err, returned by an Echo middleware, through
// writeError, unless a response has begun.
func writeEchoError(c *echo.Context, err error) {
	if res, uerr := echo.UnwrapResponse(c.Response()); uerr == nil && res.Committed {
		return
	}
	status, msg := echoStatus(err)
	if status == 0 {
		status, msg = http.StatusInternalServerError, "the request could not be handled"
	}
	code := strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
	switch status {
	case http.StatusRequestEntityTooLarge:
		code = CodeRequestEntityLarge
	case http.StatusNotFound:
		code = CodeNotFound
	}
	if code == "" {
		code = "error"
	}
	writeError(c.Response(), c.Request(), errorf(status, code, "%s", msg))
}

// echoStatus returns the status an error of Echo's carries (0 for none)
// and its message: an *echo.HTTPError's own, else the status text, as
// Echo v4's predefined errors had.
func echoStatus(err error) (int, string) {
	status := echo.StatusCode(err)
	if status == 0 {
		return 0, ""
	}
	var he *echo.HTTPError
	if errors.As(err, &he) && he.Message != "" {
		return status, he.Message
	}
	return status, http.StatusText(status)
}
