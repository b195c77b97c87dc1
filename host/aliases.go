package host

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"
	"github.com/labstack/gommon/bytes"
)

// readyAliases returns the aliases every application has; see
// MiddlewareAlias for the list. The rate limit counts on the counter
// shared over NATS when there is one; basic-auth reads the credentials
// of a's configuration when it is instantiated.
func readyAliases(a *App) aliasMap {
	return aliasMap{
		"request-id": aliasRequestID,
		"cors":       aliasCORS,
		"body-limit": aliasBodyLimit,
		"rate-limit": func(args ...string) (func(http.Handler) http.Handler, error) {
			return aliasRateLimit(rtOf(a).nats.sharedCounter(), a.Logger(), args...)
		},
		"basic-auth": func(args ...string) (func(http.Handler) http.Handler, error) {
			return aliasBasicAuth(a.cfg.BasicAuth, args...)
		},
		"gzip":           aliasGzip,
		"timeout":        aliasTimeout,
		"secure-headers": aliasSecureHeaders,
		"jwt": func(args ...string) (func(http.Handler) http.Handler, error) {
			return aliasJWT(a.cfg.Root, args...)
		},
	}
}

// wantArgs refuses a number of arguments outside min to max.
func wantArgs(name string, args []string, min, max int) error {
	switch {
	case len(args) >= min && len(args) <= max:
		return nil
	case min == max:
		return fmt.Errorf("%s takes %d argument(s), got %d", name, min, len(args))
	}
	return fmt.Errorf("%s takes %d to %d arguments, got %d", name, min, max, len(args))
}

func aliasRequestID(args ...string) (func(http.Handler) http.Handler, error) {
	if err := wantArgs("request-id", args, 0, 1); err != nil {
		return nil, err
	}
	header := echo.HeaderXRequestID
	if len(args) == 1 && args[0] != "" {
		header = http.CanonicalHeaderKey(args[0])
	}
	mw := EchoMiddleware(middleware.RequestIDWithConfig(middleware.RequestIDConfig{TargetHeader: header}))
	return func(next http.Handler) http.Handler {
		inner := mw(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Echo's middleware keeps an id the request brings; give it
			// zealgo's, so that the log, the response and the request agree.
			if id := requestID(r); id != "" && r.Header.Get(header) == "" {
				r.Header.Set(header, id)
			}
			inner.ServeHTTP(w, r)
		})
	}, nil
}

func aliasCORS(args ...string) (func(http.Handler) http.Handler, error) {
	cfg := middleware.CORSConfig{AllowOrigins: []string{"*"}, MaxAge: 600}
	if len(args) > 0 {
		cfg.AllowOrigins = nil
		for _, o := range args {
			if o = strings.TrimSpace(o); o != "" {
				cfg.AllowOrigins = append(cfg.AllowOrigins, o)
			}
		}
		cfg.AllowCredentials = len(cfg.AllowOrigins) > 0 && cfg.AllowOrigins[0] != "*"
	}
	mw := EchoMiddleware(middleware.CORSWithConfig(cfg))
	return func(next http.Handler) http.Handler {
		cors := mw(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// An OPTIONS that is no CORS request keeps the dispatcher's
			// answer with its Allow header.
			if r.Method == http.MethodOptions && r.Header.Get("Origin") == "" {
				next.ServeHTTP(w, r)
				return
			}
			cors.ServeHTTP(w, r)
		})
	}, nil
}

func aliasBodyLimit(args ...string) (func(http.Handler) http.Handler, error) {
	if err := wantArgs("body-limit", args, 1, 1); err != nil {
		return nil, err
	}
	limit, err := bytes.Parse(args[0])
	if err != nil {
		return nil, fmt.Errorf("body-limit: %q is not a size such as 512, 10K or 2M", args[0])
	}
	bl, err := middleware.BodyLimitConfig{LimitBytes: limit}.ToMiddleware()
	if err != nil {
		return nil, fmt.Errorf("body-limit: %w", err)
	}
	mw := EchoMiddleware(bl)
	return func(next http.Handler) http.Handler {
		return mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Body = tooLargeBody{r.Body}
			next.ServeHTTP(w, r)
		}))
	}, nil
}

// tooLargeBody turns Echo's 413 read error into the one the input step
// answers with 413 request_too_large.
type tooLargeBody struct{ rc io.ReadCloser }

func (b tooLargeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && echo.StatusCode(err) == http.StatusRequestEntityTooLarge {
		err = fmt.Errorf("%w: %v", errTooLarge, err)
	}
	return n, err
}

func (b tooLargeBody) Close() error { return b.rc.Close() }

// aliasRateLimit limits requests per client address: in this process
// (Echo's token bucket), or, when several instances share NATS, across
// all of them (sharedRateStore, counter.go).
func aliasRateLimit(shared windowCounter, log *slog.Logger, args ...string) (func(http.Handler) http.Handler, error) {
	if err := wantArgs("rate-limit", args, 1, 2); err != nil {
		return nil, err
	}
	per, err := strconv.ParseFloat(args[0], 64)
	if err != nil || per <= 0 {
		return nil, fmt.Errorf("rate-limit: %q is not a positive number of requests per second", args[0])
	}
	burst := 0
	if len(args) == 2 {
		if burst, err = strconv.Atoi(args[1]); err != nil || burst <= 0 {
			return nil, fmt.Errorf("rate-limit: burst %q is not a positive whole number", args[1])
		}
	}
	var store middleware.RateLimiterStore = middleware.NewRateLimiterMemoryStoreWithConfig(
		middleware.RateLimiterMemoryStoreConfig{Rate: per, Burst: burst})
	if shared != nil {
		store = newSharedRateStore(shared, log, args, per, burst)
	}
	return EchoMiddleware(middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store: store,
		DenyHandler: func(c *echo.Context, _ string, _ error) error {
			c.Response().Header().Set("Retry-After", "1")
			return echo.NewHTTPError(http.StatusTooManyRequests,
				fmt.Sprintf("more than %s requests per second from this address", args[0]))
		},
	})), nil
}

// BasicAuthEnv is the environment variable that gives the basic-auth alias
// its credentials, "user:password" pairs separated by commas, in addition
// to Config.BasicAuth.
const BasicAuthEnv = "ZEALGO_BASIC_AUTH"

// WithBasicAuth adds a user to Config.BasicAuth, checked by the basic-auth
// middleware alias.
func WithBasicAuth(user, password string) Option {
	return func(c *Config) {
		if c.BasicAuth == nil {
			c.BasicAuth = map[string]string{}
		}
		c.BasicAuth[user] = password
	}
}

// aliasBasicAuth checks credentials against Config.BasicAuth and the
// ZEALGO_BASIC_AUTH environment variable, read when the alias is
// instantiated (at start-up for Use and When).
func aliasBasicAuth(creds map[string]string, args ...string) (func(http.Handler) http.Handler, error) {
	if err := wantArgs("basic-auth", args, 0, 1); err != nil {
		return nil, err
	}
	users := map[string][sha256.Size]byte{}
	for u, p := range creds {
		users[u] = sha256.Sum256([]byte(p))
	}
	for _, pair := range strings.Split(os.Getenv(BasicAuthEnv), ",") {
		if u, p, ok := strings.Cut(strings.TrimSpace(pair), ":"); ok && u != "" {
			users[u] = sha256.Sum256([]byte(p))
		}
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("basic-auth has no credentials: set Config.BasicAuth (WithBasicAuth) or %s=user:password", BasicAuthEnv)
	}
	realm := "zealgo"
	if len(args) == 1 && args[0] != "" {
		realm = args[0]
	}
	return EchoMiddleware(middleware.BasicAuthWithConfig(middleware.BasicAuthConfig{
		Realm: realm,
		Validator: func(_ *echo.Context, user, pass string) (bool, error) {
			want, ok := users[user]
			got := sha256.Sum256([]byte(pass))
			return subtle.ConstantTimeCompare(want[:], got[:]) == 1 && ok, nil
		},
	})), nil
}

func aliasGzip(args ...string) (func(http.Handler) http.Handler, error) {
	if err := wantArgs("gzip", args, 0, 1); err != nil {
		return nil, err
	}
	cfg := middleware.GzipConfig{}
	if len(args) == 1 {
		l, err := strconv.Atoi(args[0])
		if err != nil || l < -1 || l > 9 {
			return nil, fmt.Errorf("gzip: level %q is not -1 to 9", args[0])
		}
		cfg.Level = l
	}
	return EchoMiddleware(middleware.GzipWithConfig(cfg)), nil
}

// aliasTimeout is the standard library's http.TimeoutHandler: the
// handler's response is held until it returns (streaming is not flushed
// early), and after the duration the client gets 503 with the JSON
// envelope. The request's context is done at the same moment; a handler
// that runs on is reported late as the execution limit's are (exectime.go).
func aliasTimeout(args ...string) (func(http.Handler) http.Handler, error) {
	if err := wantArgs("timeout", args, 1, 1); err != nil {
		return nil, err
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("timeout: %q is not a positive duration such as 5s", args[0])
	}
	return func(next http.Handler) http.Handler {
		th := http.TimeoutHandler(lateWatched(next, d), d, "")
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			th.ServeHTTP(&timeoutJSON{ResponseWriter: w, r: r, d: d}, r)
		})
	}, nil
}

// timeoutJSON answers http.TimeoutHandler's 503 with the JSON envelope
// (or the application's error format), and frees a handler blocked reading
// the body (exectime.go).
type timeoutJSON struct {
	http.ResponseWriter
	r       *http.Request
	d       time.Duration
	swallow bool // the 503 is written: TimeoutHandler's own (empty) body is not
}

func (w *timeoutJSON) WriteHeader(code int) {
	if code == http.StatusServiceUnavailable && w.Header().Get("Content-Type") == "" {
		unblockBody(w.ResponseWriter, true)
		w.swallow = true
		writeJSONError(w.ResponseWriter, w.r, errorf(http.StatusServiceUnavailable, "service_unavailable",
			"the handler did not answer within %s", w.d))
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *timeoutJSON) Write(p []byte) (int, error) {
	if w.swallow {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *timeoutJSON) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func aliasSecureHeaders(args ...string) (func(http.Handler) http.Handler, error) {
	if err := wantArgs("secure-headers", args, 0, 0); err != nil {
		return nil, err
	}
	cfg := middleware.DefaultSecureConfig
	cfg.HSTSMaxAge = 31536000
	cfg.ReferrerPolicy = "strict-origin-when-cross-origin"
	return EchoMiddleware(middleware.SecureWithConfig(cfg)), nil
}
