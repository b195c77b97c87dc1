package host

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/zealgo/zealgo/interp"
)

// Panics. A panic in a handler, page or task is logged as one record:
// the request id (for a task, the task id, and the request id when the
// dispatcher gave one), the file, the panic value and "stack", the list
// of frames "file:line func", innermost first. Each interpreted frame has
// the line of the statement it was running (interp's trace, trace.go
// there); where the panic began in compiled code that the file called,
// those compiled frames come first; frames of the Go runtime, reflect and
// the interpreter are left out. With Config.Dev the 500 page shows the
// trace with the source lines of each frame, and the JSON envelope
// carries "panic" and "stack"; never without it.

// panicInfo is a recovered panic: its description and its frames.
type panicInfo struct {
	value  any
	desc   string
	frames []interp.Frame
}

// recovered describes p, a value recovered from a panic; call it from the
// deferred func that recovered p. A panic that crossed no interpreted
// frame (a fault of compiled code) gets the compiled frames of the stack
// that panicked.
// caught is recovered for what a deferred recover() of the request path
// returned: nil for no panic, and http.ErrAbortHandler panicked again,
// for net/http to cut the connection as it does.
func caught(p any) *panicInfo {
	if p == nil {
		return nil
	}
	pi := recovered(p)
	if pi.value == http.ErrAbortHandler {
		panic(http.ErrAbortHandler)
	}
	return pi
}

func recovered(p any) *panicInfo {
	v, frames := interp.Recovered(p)
	if frames == nil && isCompiled() {
		frames = compiledPanicFrames() // compiled.go, frames.go
	}
	if frames == nil {
		frames = interp.PanicFrames(2)
	}
	return &panicInfo{value: v, desc: interp.DescribePanic(v), frames: frames}
}

// describePanic is caught for a live handler (liveRequests, live_hub.go):
// the panic's description and frames; ok is false for no panic.
func describePanic(p any) (desc string, stack []string, ok bool) {
	pi := caught(p)
	if pi == nil {
		return "", nil, false
	}
	return pi.desc, pi.stack(), true
}

// stack returns the frames as "file:line func".
func (pi *panicInfo) stack() []string { return interp.FormatFrames(pi.frames) }

// where returns the innermost interpreted frame as "file:line", or "".
func (pi *panicInfo) where() string {
	for _, f := range pi.frames {
		if !f.Compiled {
			return f.File + ":" + strconv.Itoa(f.Line)
		}
	}
	return ""
}

// panicError is the 500 a client gets for a panic: internal_error with
// the request id; in dev mode with the panic and its frames too, for the
// error page's trace and the JSON envelope.
func (a *core) panicError(id string, pi *panicInfo) *Error {
	e := internalError(id)
	if !a.cfg.Dev {
		return e
	}
	e.Hint = "panic: " + pi.desc
	if w := pi.where(); w != "" {
		e.Hint += " (" + w + ")"
	}
	e.Fields["panic"] = pi.desc
	e.Fields["stack"] = pi.stack()
	e.dev = &devDetail{Title: "panic: " + pi.desc}
	for _, f := range pi.frames {
		df := devFrame{Where: f.String()}
		if !f.Compiled {
			df.Src = devLines(a.dirs.root, filepath.Join(a.dirs.root, filepath.FromSlash(f.File)), f.Line, 0)
		}
		e.dev.Frames = append(e.dev.Frames, df)
	}
	return e
}

// templateErrPos finds the template and the position in an error of
// html/template or text/template: "template: home:3:14: ..." (execution),
// "template: home:3: ..." (parsing), "html/template:home:3:5: ..."
// (escaping).
var templateErrPos = regexp.MustCompile(`(?:html/template:|template: )([A-Za-z0-9_/-]+):(\d+)(?::(\d+))?: `)

// devTemplateError gives e, the 500 of a handler that returned err, the
// template error's file:line:col and source lines, if err is one from a
// template of the application, in dev mode; it reports whether it did.
func (a *core) devTemplateError(e *Error, err error) bool {
	if !a.cfg.Dev || err == nil {
		return false
	}
	msg := err.Error()
	if !strings.Contains(msg, "zealgo: template") {
		return false
	}
	m := templateErrPos.FindStringSubmatchIndex(msg)
	if m == nil {
		return false
	}
	name := msg[m[2]:m[3]]
	line, _ := strconv.Atoi(msg[m[4]:m[5]])
	col := 0
	if m[6] >= 0 {
		col, _ = strconv.Atoi(msg[m[6]:m[7]])
	}
	path := filepath.Join(a.dirs.template, filepath.FromSlash(name)+".html")
	where := a.dirs.rel(path) + ":" + strconv.Itoa(line)
	if col > 0 {
		where += ":" + strconv.Itoa(col)
	}
	title := where + ": " + msg[m[1]:]
	e.Hint = title
	e.Fields["template"] = where
	e.dev = &devDetail{Title: title, Frames: []devFrame{{Src: devLines(a.dirs.template, path, line, col)}}}
	return true
}

// logPanic logs a panic of a handler or page call as one record.
func (a *core) logPanic(r *http.Request, st *reqState, pi *panicInfo) {
	attrs := []any{"request_id", st.id}
	if st.file != nil {
		attrs = append(attrs, "file", st.file.rel)
	}
	if st.fn != nil {
		attrs = append(attrs, "func", st.fn.name)
	}
	attrs = append(attrs, "path", r.URL.Path, "panic", pi.desc, "stack", pi.stack())
	a.log.Error("handler panic", attrs...)
}
