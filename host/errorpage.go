package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zealgo/zealgo/interp"
)

// Error pages. Outside /api/, an error response zealgo makes (no page or
// file, 405, a page that panics, fails to load or returns an error, a page
// or middleware that sets a 4xx/5xx status and writes no body) is an HTML
// page, unless the request prefers JSON (PrefersJSON, negotiate.go): then
// it is the {"error","hint"} envelope of the API. Under /api/ errors are
// always JSON. servePublic wraps every response outside /api/ in a
// publicWriter, which the request's state names as its error writer
// (writeError).
//
// The application replaces the HTML pages with ErrorPage or ErrorTemplate.
// In dev mode (Config.Dev, `zealgo serve --dev`) a page that fails to
// compile shows file:line:col, the message and the source lines around it;
// in the default mode the client sees a generic page with the request id,
// and the details go to the log only.

type pageErrorKey struct{}

// PageError returns the error that the error page handler serving r
// renders, or nil when r is not such a request.
func PageError(r *http.Request) *Error {
	e, _ := r.Context().Value(pageErrorKey{}).(*Error)
	return e
}

// publicWriter wraps the response of a request outside /api/: errors
// written for the request go through its writeError, and a 4xx or 5xx
// status sent with no body gets the error page as its body.
type publicWriter struct {
	http.ResponseWriter
	app *site
	r   *http.Request

	pending int  // an error status held back until a body or the end
	sent    bool // the header went out
	body    bool // something of the body was written
	inError bool // an error is being written
}

// newPublicWriter wraps w and makes the wrapper the error writer of r.
func (a *site) newPublicWriter(w http.ResponseWriter, r *http.Request) *publicWriter {
	pw := &publicWriter{ResponseWriter: w, app: a, r: r}
	if st := stateOf(r); st != nil {
		st.pages = pw
	}
	return pw
}

// WriteHeader holds back an error status until the body starts.
func (w *publicWriter) WriteHeader(code int) {
	if w.sent || w.pending != 0 {
		return
	}
	if code >= 400 && !w.inError {
		w.pending = code
		return
	}
	if code >= 200 {
		w.sent = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *publicWriter) sendPending() {
	if w.pending != 0 && !w.sent {
		w.sent = true
		w.ResponseWriter.WriteHeader(w.pending)
	}
}

// Write sends the held-back status, if any, then b.
func (w *publicWriter) Write(b []byte) (int, error) {
	if len(b) > 0 {
		w.body = true
	}
	w.sendPending()
	w.sent = true
	return w.ResponseWriter.Write(b)
}

// ReadFrom sends the held-back status, if any, then copies src through
// the wrapped writer's ReadFrom when it has one (a static file's way to
// sendfile, static.go).
func (w *publicWriter) ReadFrom(src io.Reader) (int64, error) {
	w.sendPending()
	w.sent = true
	var n int64
	var err error
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(w.ResponseWriter, src)
	}
	if n > 0 {
		w.body = true
	}
	return n, err
}

// Flush sends the header and flushes.
func (w *publicWriter) Flush() {
	w.sendPending()
	w.sent = true
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *publicWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish gives a held-back error status with no body its error page.
func (w *publicWriter) finish() {
	if w.pending == 0 || w.sent || w.body {
		return
	}
	code := w.pending
	w.writeError(w, w.r, errorf(code, statusCode(code), "%s", http.StatusText(code)))
}

// writeError writes e through w, which leads to pw: the JSON envelope for
// a client that prefers JSON, else an HTML error page. An error raised
// while one is being written (by a custom error page) is sent as JSON.
func (pw *publicWriter) writeError(w http.ResponseWriter, r *http.Request, e *Error) {
	if pw.inError {
		writeJSONError(w, r, e)
		return
	}
	pw.inError, pw.pending = true, 0
	defer func() { pw.inError = false }()
	if PrefersJSON(r) {
		writeJSONError(w, r, e)
		return
	}
	pw.app.writeErrorPage(w, r, e)
}

// statusCode returns the error code for an HTTP status: "not_found",
// "method_not_allowed", "internal_error", "bad_request", ...
func statusCode(status int) string {
	switch status {
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusMethodNotAllowed:
		return CodeMethodNotAllowed
	case http.StatusInternalServerError:
		return CodeInternal
	}
	t := http.StatusText(status)
	if t == "" {
		return "error_" + strconv.Itoa(status)
	}
	return strings.ReplaceAll(strings.ToLower(t), " ", "_")
}

// writeErrorPage writes e through w as an HTML page: the application's
// (ErrorPage, ErrorTemplate) or the built-in one, which in dev mode shows
// the source lines around a compile error.
func (a *site) writeErrorPage(w http.ResponseWriter, r *http.Request, e *Error) {
	h := w.Header()
	for k, v := range e.Header {
		h[k] = v
	}
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	h.Del("Etag")
	h.Del("Last-Modified")
	h.Set("X-Content-Type-Options", "nosniff")
	custom := a.pub.errorPages[e.Status]
	if custom == nil {
		custom = a.pub.errorPages[0]
	}
	if custom != nil {
		h.Del("Content-Type")
		sw := &statusWriter{ResponseWriter: w, status: e.Status}
		custom.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), pageErrorKey{}, e)))
		sw.ensure()
		return
	}
	var src *devSource
	if ce, ok := e.compile.(*interp.Error); ok && a.cfg.Dev {
		src = a.devSource(ce)
	}
	var dev *devDetail
	if a.cfg.Dev {
		dev = e.dev
	}
	h.Set("Content-Type", contentHTML)
	w.WriteHeader(e.Status)
	_, _ = w.Write([]byte(defaultErrorPage(e, r, src, dev)))
}

// statusWriter presets the status of a custom error page.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", contentHTML)
		}
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.ensure()
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) ensure() {
	if !w.wrote {
		w.WriteHeader(w.status)
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// errorData is what an error template receives.
func errorData(e *Error, r *http.Request) map[string]any {
	return map[string]any{"Status": e.Status, "Title": http.StatusText(e.Status), "Code": e.Code,
		"Hint": e.Hint, "RequestID": requestID(r), "Path": r.URL.Path}
}

// devSource reads the lines around a compile error from the file, which
// must lie inside the application root.
func (a *site) devSource(ce *interp.Error) *devSource {
	return devLines(a.dirs.root, filepath.Join(a.dirs.root, filepath.FromSlash(ce.File)), ce.Line, ce.Col)
}

// devLines reads the lines around line of the file at path, which must lie
// inside base (symlinks resolved), marking line and, when col > 0, the
// column with a caret.
func devLines(base, path string, line, col int) *devSource {
	d := &devSource{}
	real, err := filepath.EvalSymlinks(path)
	if err != nil || !within(base, real) || line <= 0 {
		return d
	}
	src, err := os.ReadFile(real)
	if err != nil {
		return d
	}
	lines := strings.Split(string(src), "\n")
	for n := line - 3; n <= line+3; n++ {
		if n < 1 || n > len(lines) {
			continue
		}
		l := devLine{N: n, Text: strings.TrimRight(lines[n-1], "\r"), Hot: n == line}
		if l.Hot && col > 0 {
			// Keep tabs so that the caret lines up under the column.
			pre := l.Text
			if col-1 < len(pre) {
				pre = pre[:col-1]
			}
			l.Caret = strings.Map(func(r rune) rune {
				if r == '\t' {
					return '\t'
				}
				return ' '
			}, pre) + "^"
		}
		d.Lines = append(d.Lines, l)
	}
	return d
}

var errorTemplate = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Status}} {{.Title}}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:3rem 1rem;color:#1f2328;background:#f6f8fa}
main{max-width:52rem;margin:auto}
h1{font-size:2rem;margin:0 0 .5rem}
.hint{color:#59636e}
.rid{color:#818b98;font-size:.85rem}
pre{background:#fff;border:1px solid #d1d9e0;border-radius:6px;padding:1rem;overflow:auto;tab-size:4;font-size:.9rem}
.where{font-weight:600;color:#cf222e}
.hot{background:#ffebe9;display:inline-block;min-width:100%}
.caret{color:#cf222e}
.frame{font-family:ui-monospace,monospace;margin:1.25rem 0 .25rem}
</style>
</head>
<body>
<main>
<h1>{{.Status}} {{.Title}}</h1>
{{if .Dev}}<p class="where">{{.Dev.Title}}</p>
{{range .Dev.Frames}}{{with .Where}}<p class="frame">{{.}}</p>
{{end}}{{with .Src}}{{template "lines" .}}{{end}}{{end}}{{else if .Src}}<p class="where">{{$.Hint}}</p>
{{template "lines" .Src}}{{else}}<p class="hint">{{.Hint}}</p>
{{end}}<p><a href="/">Go to the home page</a></p>
{{with .RequestID}}<p class="rid">Request id: <code>{{.}}</code></p>
{{end}}</main>
</body>
</html>
{{define "lines"}}{{if .Lines}}<pre class="source">{{range .Lines}}{{if .Hot}}<span class="hot">{{printf "%4d" .N}} | {{.Text}}</span>
{{with .Caret}}<span class="caret">     | {{.}}</span>
{{end}}{{else}}{{printf "%4d" .N}} | {{.Text}}
{{end}}{{end}}</pre>
{{end}}{{end}}`))

// defaultErrorHTML renders the built-in error page.
func defaultErrorHTML(e *Error, r *http.Request, src *devSource) string {
	return defaultErrorPage(e, r, src, nil)
}

// defaultErrorPage renders the built-in error page; in dev mode with the
// source lines of a compile error (src) or the trace of a panic or a
// template error (dev).
func defaultErrorPage(e *Error, r *http.Request, src *devSource, dev *devDetail) string {
	title := http.StatusText(e.Status)
	if title == "" {
		title = "Error"
	}
	var b bytes.Buffer
	err := errorTemplate.Execute(&b, map[string]any{"Status": e.Status, "Title": title, "Hint": e.Hint,
		"RequestID": requestID(r), "Src": src, "Dev": dev})
	if err != nil {
		return "<!doctype html><title>" + strconv.Itoa(e.Status) + "</title><h1>" + strconv.Itoa(e.Status) + "</h1>"
	}
	return b.String()
}

// writeError sends e as the whole response, replacing anything buffered,
// in the format chosen for the request when it was routed: outside /api/
// through its publicWriter, which holds the choice between an error page
// and the JSON envelope (errorpage.go); under /api/, and before routing,
// the JSON envelope.
func writeError(w http.ResponseWriter, r *http.Request, e *Error) {
	if res, ok := w.(*Response); ok {
		res.reset()
	}
	if st := stateOf(r); st != nil && st.pages != nil {
		st.pages.writeError(w, r, e)
		return
	}
	writeJSONError(w, r, e)
}

// writeJSONError sends e as the JSON envelope {"error", "hint", ...}, or
// under /api/ as the application's error formatter shapes it
// (App.ErrorFormatter).
func writeJSONError(w http.ResponseWriter, r *http.Request, e *Error) {
	for k, v := range e.Header {
		w.Header()[k] = v
	}
	b, err := formatError(r, e)
	if err != nil {
		b = []byte(`{"error":"internal_error","hint":"the error could not be encoded"}`)
	}
	h := w.Header()
	h.Set("Content-Type", contentJSON)
	h.Del("Content-Length")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}

// formatError encodes the body of e: the error formatter's value for a
// request under /api/, if there is a formatter and its value encodes,
// else the envelope. A formatter that panics is logged and the envelope
// sent.
func formatError(r *http.Request, e *Error) (b []byte, err error) {
	if r == nil || !isAPIPath(r.URL.Path) {
		return json.Marshal(e.body())
	}
	f := errorFormat(r) // setupgen.go
	if f == nil {
		return json.Marshal(e.body())
	}
	defer func() {
		if p := recover(); p != nil {
			if st := stateOf(r); st != nil {
				st.app.log.Error("error formatter panicked", "request_id", requestID(r), "panic", interp.DescribePanic(p))
			}
			b, err = json.Marshal(e.body())
		}
	}()
	v := f(r, &Error{Status: e.Status, Code: e.Code, Hint: e.Hint, Fields: e.Fields})
	if v != nil {
		if b, err = json.Marshal(v); err == nil {
			return b, nil
		}
	}
	return json.Marshal(e.body())
}

// fail sends err: an *Error as it is, anything else as a 500
// internal_error whose cause goes to the log under the request id. An
// error that is the request's own cancellation (the client went away and
// the handler returned what its context said, or a query canceled with
// it) is no failure of the server: it is logged at info level and
// answered 499, as nginx does, which nobody reads but the access log and
// the metrics, whose 5xx count it stays out of.
func (a *core) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := asError(err)
	if e == nil && clientGone(r, err) {
		a.log.Info("request canceled: the client went away", "request_id", requestID(r), "path", r.URL.Path, "err", err)
		e = &Error{Status: statusClientClosed, Code: "client_closed_request", Hint: "the client closed the request"}
	}
	if e == nil {
		id := requestID(r)
		a.log.Error("handler error", "request_id", id, "path", r.URL.Path, "err", err)
		e = internalError(id)
		a.devTemplateError(e, err)
	}
	writeError(w, r, e)
}

// statusClientClosed is the status of a request the client closed before
// the answer (nginx's 499).
const statusClientClosed = 499

// clientGone reports whether err comes from the cancellation of r's
// context: the client closed the request.
func clientGone(r *http.Request, err error) bool {
	return errors.Is(err, context.Canceled) && errors.Is(r.Context().Err(), context.Canceled)
}
