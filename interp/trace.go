package interp

import (
	"bytes"
	"io"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// Panic traces. Yaegi keeps no position of the statement an interpreted
// frame is running: the line it prints for each frame of a panic (to the
// interpreter's Stderr) is the first statement of the function, whatever
// statement panicked, because runCfg's deferred report reads an exec
// variable that its loop shadows. So, before a file is evaluated, each
// function of it is rewritten (tracerw.go) to keep the line of the
// statement it is running in a local variable and to have its frame, with
// that line, added to a panic that passes through it:
//
//	func boom() int {        func boom() int { var __zealgo_l int; defer __zealgo_rt.Mark(&__zealgo_l, "boom"); __zealgo_l = 2;
//		x := f()                 x := f(); __zealgo_l = 3
//		return x * 2             { var __zealgo_r0 int; __zealgo_r0 = x * 2; __zealgo_l = 0; return __zealgo_r0 }
//	}                        }
//
// A return sets the line to 0 once its results are evaluated, so Mark,
// deferred, tells a return (nothing to do) from a panic: then it records
// the frame for the goroutine (tracemark.go). Recovered joins the frames
// a panic recorded to its value, innermost first; so does Frame, the
// deferred recover of a func a go statement starts, which wraps the value
// in a *Trace. Code of the file that calls recover gets the value as it
// was panicked with (its recover() calls are rewritten to Plain, which
// also drops the frames recorded so far).

// Frame is one frame of a panic's trace: an interpreted function of a
// handler file, or the compiled function where the panic began.
type Frame struct {
	// File is the file's path as given to Compile (or, for a compiled
	// function, its source file shortened to the package directory).
	File string
	// Line is the line of the statement the frame was running: where it
	// panicked, or where it made the call that did.
	Line int
	// Func names the function: "boom", "(*T).m", "get" for the func
	// assigned to var get, "get.func1" for a func literal inside it.
	Func string
	// Compiled is set for a compiled (Go) function.
	Compiled bool
}

// String returns "file:line func".
func (f Frame) String() string { return f.File + ":" + strconv.Itoa(f.Line) + " " + f.Func }

// Trace is a panic value with its trace: the value the code panicked with
// and the interpreted frames it crossed, innermost first. A goroutine's
// panic reaches Options.GoPanic as one. It is an error (the panic value's description) so that compiled
// code that turns a recovered value into an error keeps the message.
type Trace struct {
	// Value is what the code panicked with.
	Value any
	// Frames are the compiled functions where the panic began, if it began
	// in compiled code called by the interpreted code (not counting the Go
	// runtime, reflect and the interpreter), then the interpreted frames.
	Frames []Frame
}

// Error describes the panic value.
func (t *Trace) Error() string { return describePanic(t.Value) }

// Unwrap returns the panic value if it is an error.
func (t *Trace) Unwrap() error {
	err, _ := t.Value.(error)
	return err
}

// Recovered splits a value recovered from a panic into what the code
// panicked with and the frames of its trace (nil when the panic crossed no
// interpreted frame). Call it on the goroutine that recovered p, once:
// the frames the panic recorded are the goroutine's (tracemark.go).
func Recovered(p any) (value any, frames []Frame) {
	if t, ok := p.(*Trace); ok {
		return t.Value, t.Frames
	}
	if p == nil {
		return nil, nil
	}
	if frames, ok := pending.take(); ok { // marked frames (tracemark.go)
		return plainValue(p), frames
	}
	return p, nil
}

// frameFunc returns the Frame func of the rewritten functions of one file:
// given what recover() returned in the function's deferred call, it
// returns if that is nil, and otherwise panics again with the value
// wrapped in a *Trace that has the frame added.
func frameFunc(path string) func(p any, line int, fn string) {
	return func(p any, line int, fn string) {
		if p == nil {
			return
		}
		f := Frame{File: path, Line: line, Func: fn}
		t, ok := p.(*Trace)
		if !ok {
			frames, marked := pending.take() // frames below this one (tracemark.go)
			if !marked {
				frames = compiledOrigin()
			}
			t = &Trace{Value: plainValue(p), Frames: frames}
		}
		t.Frames = append(t.Frames, f)
		panic(t)
	}
}

// goFrameFunc returns the GoFrame func of one file: the Frame of the func
// a go statement starts, which hands the panic, with its frame added, to
// report (the goroutine guard's) instead of panicking again.
func goFrameFunc(path string, report func(any)) func(p any, line int, fn string) {
	frame := frameFunc(path)
	return func(p any, line int, fn string) {
		if p == nil {
			return
		}
		defer func() { report(recover()) }()
		frame(p, line, fn)
	}
}

// unwrapValue is the rewritten recover() of interpreted code: it returns
// the value as it was panicked with, so that a type assertion on it works
// as in Go (Yaegi's own recover returns what panic() was given wrapped in
// a reflect.Value).
func unwrapValue(p any) any {
	if p == nil {
		return nil
	}
	pending.recoveredHere()
	if t, ok := p.(*Trace); ok {
		return plainValue(t.Value)
	}
	return plainValue(p)
}

// plainValue returns the value a reflect.Value holds (Yaegi panics with
// its values so wrapped), or p.
func plainValue(p any) any {
	if rv, ok := p.(reflect.Value); ok && rv.IsValid() && rv.CanInterface() {
		return rv.Interface()
	}
	return p
}

// compiledOrigin returns the compiled frames where the panic being
// recovered began, when it began in compiled code that interpreted code
// called (strings.Repeat, a method of the host): the frames between the
// runtime's panic and the first frame of reflect or the interpreter.
// Frames of the Go runtime are left out, so a runtime error raised by the
// interpreter itself (a nil map, an index out of range) has none.
func compiledOrigin() []Frame {
	var pcs [64]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	var out []Frame
	inPanic := false
	for {
		fr, more := frames.Next()
		switch {
		case !inPanic:
			inPanic = fr.Function == "runtime.gopanic"
		case isInterpreterFrame(fr.Function):
			return out
		case !strings.HasPrefix(fr.Function, "runtime."):
			out = append(out, CompiledFrame(fr))
		}
		if !more {
			return nil // no interpreter frame below: not a panic of interpreted code
		}
	}
}

// isInterpreterFrame reports whether a compiled function belongs to the
// machinery that runs interpreted code: reflect or Yaegi.
func isInterpreterFrame(fn string) bool {
	return strings.HasPrefix(fn, "reflect.") || strings.HasPrefix(fn, "github.com/traefik/yaegi/")
}

// CompiledFrame names a frame of compiled code as a trace does: the last
// directory and name of its file, its function without the import path.
func CompiledFrame(fr runtime.Frame) Frame {
	return Frame{File: shortFile(fr.File), Line: fr.Line, Func: shortFunc(fr.Function), Compiled: true}
}

// shortFile keeps the last directory and the name of a source file path:
// "strings/strings.go".
func shortFile(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return path
	}
	if j := strings.LastIndexByte(path[:i], '/'); j >= 0 {
		return path[j+1:]
	}
	return path
}

// shortFunc drops the import path before the package name of a compiled
// function: "github.com/x/host.(*App).Provide" becomes
// "host.(*App).Provide".
func shortFunc(fn string) string {
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// PanicFrames returns the compiled frames of the panic that the calling
// goroutine is recovering (call it from the deferred func that recovers):
// the frames from where it panicked outwards, without the Go runtime,
// reflect and the interpreter. It is the stack of a panic that crossed no
// interpreted frame, a fault of compiled code; skip frames above the
// caller are left out when it is not called while panicking.
func PanicFrames(skip int) []Frame {
	var pcs [64]uintptr
	n := runtime.Callers(skip+2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	var out []Frame
	for {
		fr, more := frames.Next()
		switch {
		case fr.Function == "runtime.gopanic":
			out = out[:0] // the frames above it are the recovering ones
		case fr.Function != "" && !isInterpreterFrame(fr.Function) && !strings.HasPrefix(fr.Function, "runtime."):
			out = append(out, CompiledFrame(fr))
		}
		if !more {
			return out
		}
	}
}

// yaegiPanicLine matches the line Yaegi prints for each interpreted frame
// a panic crosses ("12:2: panic: main.boom(...)"): its position is that of
// the function's first statement, not of the panic, and the trace says it
// right, so these lines are dropped.
var yaegiPanicLine = regexp.MustCompile(`^(?:\S+:)?\d+:\d+: panic: \S*\(\.\.\.\)\n?$`)

// panicLineFilter passes writes to w except Yaegi's per-frame panic lines.
type panicLineFilter struct{ w io.Writer }

func (f panicLineFilter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(": panic: ")) && yaegiPanicLine.Match(p) {
		return len(p), nil
	}
	return f.w.Write(p)
}

// FormatFrames returns each frame as "file:line func".
func FormatFrames(frames []Frame) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = f.String()
	}
	return out
}
