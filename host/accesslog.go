package host

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// accessLog writes the access record of a finished request, through the
// application's logger at level info: method, path (without the query,
// which may hold secrets), status, bytes (of the body sent), duration,
// request_id, file (the handler or page file that answered; absent when
// none did) and remote (the peer's address). With tracing on it also
// carries trace_id and span_id.
func (a *App) accessLog(r *http.Request, id, file string, status int, size int64, d time.Duration) {
	ctx := r.Context()
	if !a.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := [...]slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Int64("bytes", size),
		slog.Duration("duration", d),
		slog.String("request_id", id),
		slog.String("remote", r.RemoteAddr),
		slog.String("file", file),
	}
	n := len(attrs)
	if file == "" {
		n--
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "request", attrs[:n]...)
}

// newServeLogger makes the log of the serve command: text or JSON
// (Config.Ops.LogFormat) at Config.Ops.LogLevel, on w.
func (a *App) newServeLogger(w io.Writer) (*slog.Logger, error) {
	level, err := a.cfg.Ops.logLevel(a.cfg.Dev)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: level}
	switch a.cfg.Ops.LogFormat {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("zealgo: log format %q: want text or json", a.cfg.Ops.LogFormat)
}
