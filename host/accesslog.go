package host

import (
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/zealgo/zealgo/internal/logbuf"
	"go.opentelemetry.io/otel/trace"
)

// accessLogRecord writes the access record of a finished request, through
// Config.Ops.AccessLogger (default: the application's logger) at level
// info: method, path (without the query,
// which may hold secrets), status, bytes (of the body sent), duration,
// request_id, file (the handler or page file that answered; absent when
// none did) and remote (the peer's address). With tracing on it also
// carries trace_id and span_id. Into the serve command's own log it is
// written without slog (directAccessLog), the same bytes at a fraction
// of the cost.
func (o *opsState) accessLogRecord(r *http.Request, id, file string, status int, size int64, end time.Time, d time.Duration) {
	if direct := o.direct; direct != nil {
		if direct.Enabled(slog.LevelInfo) {
			o.directAccessLog(direct, r, id, file, status, size, end, d)
		}
		return
	}
	ctx := r.Context()
	h := o.access.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
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
	// The record is made here rather than by Logger.LogAttrs, which would
	// look up its caller's program counter, a cost per request that no
	// handler option uses here.
	rec := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	rec.AddAttrs(attrs[:n]...)
	_ = h.Handle(ctx, rec)
}

// accessKeys are the keys of the access record, encoded once.
var accessKeys = struct {
	method, path, status, bytes, duration, requestID, remote, file, traceID, spanID logbuf.Key
}{logbuf.NewKey("method"), logbuf.NewKey("path"), logbuf.NewKey("status"), logbuf.NewKey("bytes"),
	logbuf.NewKey("duration"), logbuf.NewKey("request_id"), logbuf.NewKey("remote"), logbuf.NewKey("file"),
	logbuf.NewKey("trace_id"), logbuf.NewKey("span_id")}

// directAccessLog writes the access record straight into the buffer of
// the serve command's log (logbuf.Direct): the same bytes as accessLogRecord's
// slog record through that log's handler (and traceLogHandler's ids),
// with no allocation.
func (o *opsState) directAccessLog(direct *logbuf.Direct, r *http.Request, id, file string, status int, size int64, end time.Time, d time.Duration) {
	k := &accessKeys
	rec := direct.Begin(end, slog.LevelInfo, "request")
	rec.String(k.method, r.Method)
	rec.String(k.path, r.URL.Path)
	rec.Int(k.status, int64(status))
	rec.Int(k.bytes, size)
	rec.Duration(k.duration, d)
	rec.String(k.requestID, id)
	rec.String(k.remote, r.RemoteAddr)
	if file != "" {
		rec.String(k.file, file)
	}
	if o.tracer != nil {
		if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
			rec.String(k.traceID, sc.TraceID().String())
			rec.String(k.spanID, sc.SpanID().String())
		}
	}
	_ = rec.End()
}

// newServeLogs makes the log of the serve command: text or JSON
// (Config.Ops.LogFormat) at Config.Ops.LogLevel, on w. Access records go
// through a buffer (internal/logbuf) written at least every 100ms, so
// that they cost no system call each; every other record is written at
// once. Close the logs as the command ends.
func newServeLogs(cfg *Config, w io.Writer) (*logbuf.Logs, error) {
	level, err := cfg.Ops.logLevel(cfg.Dev)
	if err != nil {
		return nil, err
	}
	return logbuf.New(w, cfg.Ops.LogFormat, level)
}
