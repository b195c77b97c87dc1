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
// once from the Config (edgeState.setup, called by App.setup) and applied by the
// outermost layer (dispatch.go).
//
//   - Time limits: for a request with a body, a read deadline that every
//     read of the body extends (Config.BodyTimeout). The write deadline of
//     a handler's response (Config.WriteTimeout) is the Response's
//     (response.go): set when it starts sending, moved at each flush.
//   - Frame headers: Content-Security-Policy: frame-ancestors and
//     X-Frame-Options (Config.FrameAncestors): outside /api/ set before
//     the handler runs, so that a handler that sets its own keeps it;
//     under /api/ set just before the header goes out, unless the
//     response is JSON or the handler set its own (owedFrames).
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
	// pageWriter writes an error outside /api/ as an error page
	// (site.newPublicWriter, errorpage.go).
	pageWriter func(http.ResponseWriter, *http.Request) http.ResponseWriter
}

// setup checks and prepares the edge settings of cfg. pageWriter writes
// the refusal of a cross-origin request outside /api/ as an error page.
func (e *edgeState) setup(cfg *Config, pageWriter func(http.ResponseWriter, *http.Request) http.ResponseWriter) error {
	e.bodyTimeout, e.pageWriter = cfg.BodyTimeout, pageWriter
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
	err := errorf(http.StatusForbidden, CodeCrossOrigin,
		"a %s from another origin is refused; the application can allow the origin with --allow-origin or app.AllowOrigins", r.Method)
	if !isAPIPath(r.URL.Path) {
		writeError(e.pageWriter(w, r), r, err)
		return
	}
	writeError(w, r, err)
}

// ClientIP returns the address of the client of r: the peer's, or, when
// the peer is a trusted proxy (Config.TrustedProxies), the last address
// in X-Forwarded-For that is no trusted proxy. Rate limits and throttles
// count by it.
func ClientIP(r *http.Request) string {
	if st := stateOf(r); st != nil && st.app != nil && st.app.edge.clientIP != nil {
		return st.app.edge.clientIP(r)
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
// body's time limit. Outside /api/ the frame headers are set at once;
// under /api/ they are owed (reqState.frames) and set just before the
// header goes out unless the response is JSON (owedFrames): a frame
// shows a page, and a JSON answer has nothing to click on.
func (e *edgeState) apply(w http.ResponseWriter, r *http.Request, st *reqState) {
	st.frames = false
	if e.csp != "" || e.xfo != "" {
		if isAPIPath(r.URL.Path) {
			st.frames = true
		} else {
			e.setFrames(w.Header(), st)
		}
	}
	if e.bodyTimeout <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	if dl := deadlinesOf(w); dl != nil && dl.SetReadDeadline(time.Now().Add(e.bodyTimeout)) == nil {
		r.Body = &timedBody{ReadCloser: r.Body, dl: dl, timeout: e.bodyTimeout}
	}
}

// setFrames sets the frame headers on h, but not one the handler set
// itself. The values come from st's batch, so that setting them costs no
// allocation of their own.
func (e *edgeState) setFrames(h http.Header, st *reqState) {
	if e.csp != "" && h["Content-Security-Policy"] == nil {
		h["Content-Security-Policy"] = st.vals.one(e.csp)
	}
	if e.xfo != "" && h["X-Frame-Options"] == nil {
		h["X-Frame-Options"] = st.vals.one(e.xfo)
	}
}

// owedFrames runs in the outermost response (st.res) just before its
// header goes out, whoever writes it: the frame headers owed by an /api/
// response (edgeState.apply) are set unless it is JSON.
func (st *reqState) owedFrames() {
	if !st.frames {
		return
	}
	st.frames = false
	h := st.res.Header()
	if ct := h["Content-Type"]; len(ct) > 0 && isJSONType(ct[0]) {
		return
	}
	st.app.edge.setFrames(h, st)
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
