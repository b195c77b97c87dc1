package host

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/labstack/echo/v5"
)

// The edge: what every request gets before the global middleware, set up
// once from the Config (edgeState.setup, called by core.start) and applied
// by the outermost layer (outer, dispatch.go). Like a middleware of chi's,
// which knows nothing of the mux, the edge depends on nothing of the
// dispatcher: what it needs comes through setup (the Config, and how to
// write an error), what it owes a request goes back as a value (apply),
// and the dispatcher keeps it in the request's state (reqState.frames,
// owedFrames, state.go); ClientIP (state.go) finds a request's edge there.
//
//   - Time limits: for a request with a body, a read deadline that every
//     read of the body extends (Config.BodyTimeout). The write deadline of
//     a handler's response (Config.WriteTimeout) is the Response's
//     (response.go): set when it starts sending, moved at each flush.
//   - Frame headers: Content-Security-Policy: frame-ancestors and
//     X-Frame-Options (Config.FrameAncestors): outside /api/ set before
//     the handler runs, so that a handler that sets its own keeps it;
//     under /api/ set just before the header goes out, unless the
//     response is JSON or the handler set its own (reqState.owedFrames).
//   - Cross-origin protection: http.CrossOriginProtection refuses unsafe
//     requests that browsers send from other origins
//     (Config.TrustedOrigins).
//   - Trusted proxies: X-Forwarded-For and X-Forwarded-Proto count only from
//     the addresses of Config.TrustedProxies (ClientIP, the Secure flag of
//     the session cookie).

// edgeState is the App's state for the edge.
type edgeState struct {
	proxies  []*net.IPNet
	clientIP echo.IPExtractor // X-Forwarded-For from trusted proxies, else the peer
	csp, xfo string           // frame headers; "" for none
	trusted  []string         // Config.TrustedOrigins; "*" turns the cross-origin protection off
	// bodyTimeout is Config.BodyTimeout.
	bodyTimeout time.Duration
	// writeErr writes an error as the whole response, in the request's
	// format (writeError, and an error page outside /api/: errorpage.go).
	writeErr func(http.ResponseWriter, *http.Request, *Error)
}

// setup checks and prepares the edge settings of cfg. writeErr writes the
// refusal of a cross-origin request.
func (e *edgeState) setup(cfg *Config, writeErr func(http.ResponseWriter, *http.Request, *Error)) error {
	e.bodyTimeout, e.writeErr = cfg.BodyTimeout, writeErr
	for _, p := range cfg.TrustedProxies {
		n, err := parseProxy(p)
		if err != nil {
			return err
		}
		e.proxies = append(e.proxies, n)
	}
	e.clientIP = echo.ExtractIPDirect()
	if len(e.proxies) > 0 {
		opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
		for _, n := range e.proxies {
			opts = append(opts, echo.TrustIPRange(n))
		}
		e.clientIP = echo.ExtractIPFromXFFHeader(opts...)
	}
	if fa := strings.TrimSpace(cfg.FrameAncestors); fa != "" {
		e.csp = "frame-ancestors " + fa
		switch fa {
		case "'none'":
			e.xfo = "DENY"
		case "'self'":
			e.xfo = "SAMEORIGIN"
		}
	}
	e.trusted = cfg.TrustedOrigins
	return nil
}

// parseProxy parses a CIDR or a single address.
func parseProxy(s string) (*net.IPNet, error) {
	s = strings.TrimSpace(s)
	if _, n, err := net.ParseCIDR(s); err == nil {
		return n, nil
	}
	ip := net.ParseIP(s)
	if ip == nil {
		return nil, fmt.Errorf("zealgo: trusted proxy %q is neither an IP address nor a CIDR such as 10.0.0.0/8", s)
	}
	bits := 128
	if ip4 := ip.To4(); ip4 != nil {
		ip, bits = ip4, 32
	}
	return &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)}, nil
}

// crossOrigin wraps h in the cross-origin protection, which trusts
// origins (Config.TrustedOrigins and the allowed origins, cors.go), unless
// Config.TrustedOrigins is "*".
func (e *edgeState) crossOrigin(h http.Handler, origins []string) (http.Handler, error) {
	if len(e.trusted) == 1 && e.trusted[0] == "*" {
		return h, nil
	}
	c := http.NewCrossOriginProtection()
	for _, o := range origins {
		if err := c.AddTrustedOrigin(strings.TrimSpace(o)); err != nil {
			return nil, fmt.Errorf("zealgo: trusted origin %q: %w", o, err)
		}
	}
	c.SetDenyHandler(http.HandlerFunc(e.refuseCrossOrigin))
	return c.Handler(h), nil
}

// refuseCrossOrigin answers an unsafe request a browser sent from another
// origin: 403 cross_origin_request, as JSON under /api/, else an error
// page for a client that does not prefer JSON.
func (e *edgeState) refuseCrossOrigin(w http.ResponseWriter, r *http.Request) {
	e.writeErr(w, r, errorf(http.StatusForbidden, CodeCrossOrigin,
		"a %s from another origin is refused; the application can allow the origin with --allow-origin or app.AllowOrigins", r.Method))
}

// clientIPOf returns the address of the client of r (ClientIP): with no
// edge (e nil, or not set up), the peer's.
func (e *edgeState) clientIPOf(r *http.Request) string {
	if e != nil && e.clientIP != nil {
		return e.clientIP(r)
	}
	return echo.ExtractIPDirect()(r)
}

// fromTrustedProxy reports whether the peer of r is a trusted proxy.
func (e *edgeState) fromTrustedProxy(r *http.Request) bool {
	if len(e.proxies) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	for _, n := range e.proxies {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// isHTTPS reports whether r reached the application over TLS: directly,
// or through a trusted proxy that says so in X-Forwarded-Proto.
func (e *edgeState) isHTTPS(r *http.Request) bool {
	return r.TLS != nil || e.fromTrustedProxy(r) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// apply sets, at the start of a request, the frame headers and the
// body's time limit, and reports whether the frame headers are owed.
// Outside /api/ they are set at once; under /api/ they are owed
// (reqState.frames) and set just before the header goes out unless the
// response is JSON (reqState.owedFrames, state.go): a frame shows a page,
// and a JSON answer has nothing to click on. vals is the request's batch
// of header values.
func (e *edgeState) apply(w http.ResponseWriter, r *http.Request, vals *valueBatch) (owed bool) {
	if e.csp != "" || e.xfo != "" {
		if isAPIPath(r.URL.Path) {
			owed = true
		} else {
			e.setFrames(w.Header(), vals)
		}
	}
	if e.bodyTimeout <= 0 || r.Body == nil || r.Body == http.NoBody {
		return owed
	}
	if dl := deadlinesOf(w); dl != nil && dl.SetReadDeadline(time.Now().Add(e.bodyTimeout)) == nil {
		r.Body = &timedBody{ReadCloser: r.Body, dl: dl, timeout: e.bodyTimeout}
	}
	return owed
}

// setFrames sets the frame headers on h, but not one the handler set
// itself. The values come from the request's batch, so that setting them
// costs no allocation of their own.
func (e *edgeState) setFrames(h http.Header, vals *valueBatch) {
	if e.csp != "" && h["Content-Security-Policy"] == nil {
		h["Content-Security-Policy"] = vals.one(e.csp)
	}
	if e.xfo != "" && h["X-Frame-Options"] == nil {
		h["X-Frame-Options"] = vals.one(e.xfo)
	}
}

// deadliner sets the deadlines of a response's connection: net/http's
// own ResponseWriter, or an http.ResponseController.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// deadlinesOf returns what sets the deadlines of w's connection, or nil
// for a writer that has none (a recorder in a test).
func deadlinesOf(w http.ResponseWriter) deadliner {
	if dl, ok := w.(deadliner); ok { // net/http's: an assertion with a cache of its own
		return dl
	}
	dl, _ := unwrapTo[deadliner](w)
	return dl
}

// unwrapTo returns the first of w and the writers it wraps that is a T.
// It unwraps w as http.ResponseController does, without the controller
// and the error value it would make for a writer that has none, on every
// call. Its assertion to T looks the pair of types up each time (a generic
// one has no cache), so that callers first try w itself.
func unwrapTo[T any](w http.ResponseWriter) (T, bool) {
	for {
		if x, ok := any(w).(T); ok {
			return x, true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			var zero T
			return zero, false
		}
		w = u.Unwrap()
	}
}

// errBodyTimeout ends the read of a request body that stalled (timedBody);
// the input answers it with 408 request_timeout (input.go).
var errBodyTimeout = errors.New("zealgo: the request body stalled")

// timedBody is a request body whose every read must make progress within
// timeout: the connection's read deadline moves before each read, and is
// lifted at the end of the body (net/http then reads on, to notice a client
// that goes away, and a deadline would end the request's context).
type timedBody struct {
	io.ReadCloser
	dl      deadliner
	timeout time.Duration
}

func (b *timedBody) Read(p []byte) (int, error) {
	_ = b.dl.SetReadDeadline(time.Now().Add(b.timeout))
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		_ = b.dl.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: %w", errBodyTimeout, err)
	}
	return n, err
}
