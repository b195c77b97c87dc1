package host

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/zealgo/zealgo/interp"
)

// Error pages. Outside /api/, an error response zealgo makes (no page or
// file, 405, a page that panics, fails to load or returns an error, a page
// or middleware that sets a 4xx/5xx status and writes no body) is an HTML
// page, unless the request prefers JSON (its Accept header ranks
// application/json above text/html): then it is the {"error","hint"}
// envelope of the API. Under /api/ errors are always JSON.
//
// The application replaces the HTML pages with ErrorPage or ErrorTemplate.
// In dev mode (Config.Dev, `zealgo serve --dev`) a page that fails to
// compile shows file:line:col, the message and the source lines around it;
// in the default mode the client sees a generic page with the request id,
// and the details go to the log only.

// ErrorPage sets h to render the HTML error page for status outside /api/;
// status 0 sets the page for every status without a page of its own. The
// response status is preset to the error's (h may change it by calling
// WriteHeader first); PageError(r) returns the error. Clients that prefer
// JSON still get the JSON envelope. A nil h restores the built-in page.
func (a *App) ErrorPage(status int, h http.Handler) {
	a.mustConfigure()
	if a.pub.errorPages == nil {
		a.pub.errorPages = map[int]http.Handler{}
	}
	if h == nil {
		delete(a.pub.errorPages, status)
		return
	}
	a.pub.errorPages[status] = h
}

// ErrorTemplate renders template/<name>.html as the HTML error page for
// status (0: every status without a page of its own), with a map holding
// Status (int), Title (the status text), Code, Hint, RequestID and Path.
// If the template fails, the built-in page is sent and the failure logged.
func (a *App) ErrorTemplate(status int, name string) {
	a.ErrorPage(status, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := PageError(r)
		html, err := a.RenderHTML(name, errorData(e, r))
		if err != nil {
			a.Logger().Error("error page template failed", "template", name, "err", err)
			html = defaultErrorHTML(e, r, nil)
		}
		w.Header().Set("Content-Type", contentHTML)
		_, _ = w.Write([]byte(html))
	}))
}

type pageErrorKey struct{}

// PageError returns the error that the error page handler serving r
// renders, or nil when r is not such a request.
func PageError(r *http.Request) *Error {
	e, _ := r.Context().Value(pageErrorKey{}).(*Error)
	return e
}

// publicWriter wraps the response of a request outside /api/: errors
// written through it become error pages, and a 4xx or 5xx status sent
// with no body gets the error page as its body.
type publicWriter struct {
	http.ResponseWriter
	app *App
	r   *http.Request

	pending int  // an error status held back until a body or the end
	sent    bool // the header went out
	body    bool // something of the body was written
	inError bool // an error page is being written
}

func (a *App) newPublicWriter(w http.ResponseWriter, r *http.Request) *publicWriter {
	return &publicWriter{ResponseWriter: w, app: a, r: r}
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
	w.pending = 0
	e := errorf(code, statusCode(code), "%s", http.StatusText(code))
	w.app.writePublicError(w, w.r, e, nil)
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

// writeErrorPage is writeError's hook: when w leads to a publicWriter, the
// error is written as an error page and it returns true.
func writeErrorPage(w http.ResponseWriter, e *Error) bool {
	pw := findPublicWriter(w)
	if pw == nil || pw.inError {
		return false
	}
	pw.app.writePublicError(w, pw.r, e, nil)
	return true
}

// writePublicError writes e through w as the JSON envelope or an HTML
// error page, whichever the request prefers. ce, in dev mode, adds the
// source lines of a compile error.
func (a *App) writePublicError(w http.ResponseWriter, r *http.Request, e *Error, ce *interp.Error) {
	pw := findPublicWriter(w)
	if pw != nil {
		if pw.inError {
			return
		}
		pw.inError = true
		defer func() { pw.inError = false }()
		pw.pending = 0
	}
	if prefersJSON(r) {
		writeError(w, e)
		return
	}
	h := w.Header()
	for k, v := range e.Header {
		h[k] = v
	}
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	h.Del("Etag")
	h.Del("Last-Modified")
	h.Set("X-Content-Type-Options", "nosniff")
	if res, ok := w.(*Response); ok {
		res.reset()
	}
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
	if ce != nil && a.cfg.Dev {
		src = a.devSource(ce)
	}
	h.Set("Content-Type", contentHTML)
	w.WriteHeader(e.Status)
	_, _ = w.Write([]byte(defaultErrorHTML(e, r, src)))
}

func findPublicWriter(w http.ResponseWriter) *publicWriter {
	for x := w; x != nil; {
		if pw, ok := x.(*publicWriter); ok {
			return pw
		}
		u, ok := x.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		x = u.Unwrap()
	}
	return nil
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

// prefersJSON reports whether the Accept header of r ranks
// application/json above text/html: by quality, then by how specific the
// matching media range is (an explicit application/json beats text/html
// reached only through */*). No Accept header, or */*, means HTML.
func prefersJSON(r *http.Request) bool {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return false
	}
	type rank struct {
		q    float64
		spec int
	}
	var js, html rank
	js.q, html.q = -1, -1
	better := func(cur *rank, q float64, spec int) {
		if q > cur.q || q == cur.q && spec > cur.spec {
			*cur = rank{q, spec}
		}
	}
	for _, line := range accept {
		for _, part := range strings.Split(line, ",") {
			mt, params, _ := strings.Cut(part, ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
						q = f
					}
				}
			}
			switch mt {
			case "application/json", "application/problem+json":
				better(&js, q, 2)
			case "text/html", "application/xhtml+xml":
				better(&html, q, 2)
			case "application/*":
				better(&js, q, 1)
			case "text/*":
				better(&html, q, 1)
			case "*/*":
				better(&js, q, 0)
				better(&html, q, 0)
			}
		}
	}
	if js.q <= 0 {
		return false
	}
	return js.q > html.q || js.q == html.q && js.spec > html.spec
}

// errorData is what an error template receives.
func errorData(e *Error, r *http.Request) map[string]any {
	return map[string]any{"Status": e.Status, "Title": http.StatusText(e.Status), "Code": e.Code,
		"Hint": e.Hint, "RequestID": requestID(r), "Path": r.URL.Path}
}

// devSource holds the source lines around a compile error; the page
// shows them under the error's hint (file:line:col: message).
type devSource struct {
	Lines []devLine
}

type devLine struct {
	N     int
	Text  string
	Hot   bool
	Caret string // spaces up to the column, on the offending line
}

// devSource reads the lines around a compile error from the file, which
// must lie inside the application root.
func (a *App) devSource(ce *interp.Error) *devSource {
	d := &devSource{}
	path := filepath.Join(a.dirs.root, filepath.FromSlash(ce.File))
	real, err := filepath.EvalSymlinks(path)
	if err != nil || !within(a.dirs.root, real) || ce.Line <= 0 {
		return d
	}
	src, err := os.ReadFile(real)
	if err != nil {
		return d
	}
	lines := strings.Split(string(src), "\n")
	for n := ce.Line - 3; n <= ce.Line+3; n++ {
		if n < 1 || n > len(lines) {
			continue
		}
		l := devLine{N: n, Text: strings.TrimRight(lines[n-1], "\r"), Hot: n == ce.Line}
		if l.Hot && ce.Col > 0 {
			// Keep tabs so that the caret lines up under the column.
			pre := l.Text
			if ce.Col-1 < len(pre) {
				pre = pre[:ce.Col-1]
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
</style>
</head>
<body>
<main>
<h1>{{.Status}} {{.Title}}</h1>
{{with .Src}}<p class="where">{{$.Hint}}</p>
{{if .Lines}}<pre class="source">{{range .Lines}}{{if .Hot}}<span class="hot">{{printf "%4d" .N}} | {{.Text}}</span>
<span class="caret">     | {{.Caret}}</span>
{{else}}{{printf "%4d" .N}} | {{.Text}}
{{end}}{{end}}</pre>{{end}}
{{else}}<p class="hint">{{.Hint}}</p>
{{end}}{{with .RequestID}}<p class="rid">Request id: <code>{{.}}</code></p>
{{end}}</main>
</body>
</html>
`))

// defaultErrorHTML renders the built-in error page.
func defaultErrorHTML(e *Error, r *http.Request, src *devSource) string {
	title := http.StatusText(e.Status)
	if title == "" {
		title = "Error"
	}
	var b bytes.Buffer
	err := errorTemplate.Execute(&b, map[string]any{"Status": e.Status, "Title": title, "Hint": e.Hint,
		"RequestID": requestID(r), "Src": src})
	if err != nil {
		return "<!doctype html><title>" + strconv.Itoa(e.Status) + "</title><h1>" + strconv.Itoa(e.Status) + "</h1>"
	}
	return b.String()
}

// isAPIPath reports whether path is /api or lies below it.
func isAPIPath(path string) bool { return covers("/api", path) }

// publicEchoError answers an error Echo raised for a path outside /api/
// as an error page, and reports whether it did.
func (a *App) publicEchoError(err error, c echo.Context) bool {
	r := c.Request()
	if isAPIPath(r.URL.Path) {
		return false
	}
	var he *echo.HTTPError
	if !errors.As(err, &he) {
		return false // a.fail logs it and sends a 500
	}
	pw := a.newPublicWriter(c.Response(), r)
	e := errorf(he.Code, statusCode(he.Code), "%s", http.StatusText(he.Code))
	if he.Code == http.StatusNotFound {
		e.Hint = "nothing is served at " + r.URL.Path
	}
	a.writePublicError(pw, r, e, nil)
	return true
}
