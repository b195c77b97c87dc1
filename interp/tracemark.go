package interp

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Marks: the cheap form of a traced frame. A traced function defers
// Mark(&line, name), a compiled call, instead of a func literal that
// recovers (Yaegi makes a reflect.MakeFunc wrapper and a frame for each
// deferred literal, about 2 µs and 20 allocations per call). Mark cannot
// see the panic value (Yaegi's recover is the interpreter's), so it
// records its frame on the side, for the goroutine, when the frame it
// belongs to unwinds a panic; Recovered (or the goroutine guard's Frame)
// later joins those frames to the value. On the path without a panic the
// function's returns have set its line variable to 0 (exits, tracerw.go),
// and Mark returns at once; otherwise it makes sure, from a few return
// addresses of its own stack (panicState), that a panic is unwinding.
//
// A panic is new when the panic Mark sees was not raised again by the
// deferred call of another interpreted frame: its frames start afresh,
// with the compiled frames where it began. A panic that interpreted code
// recovers itself (its recover() is rewritten to Plain) drops the frames
// recorded so far; the frame that recovered records none.

// markFunc returns the Mark func of the rewritten functions of one file.
func markFunc(path string) func(line *int, fn string) {
	return func(line *int, fn string) {
		if *line == 0 { // the function returned (exits, tracerw.go)
			return
		}
		panicking, continued := panicState()
		if !panicking {
			return
		}
		pending.add(Frame{File: path, Line: *line, Func: fn}, continued)
	}
}

// pendingTraces holds the frames of the panics that goroutines are
// unwinding through interpreted code, by goroutine id.
type pendingTraces struct {
	mu   sync.Mutex
	byG  map[uint64]*pendingTrace
	size atomic.Int32 // len(byG), read without the lock
}

type pendingTrace struct {
	frames []Frame
	// recoveredAt is the stack depth at which interpreted code recovered
	// the panic (Plain), or 0. A Mark below that depth is the recovering
	// frame's, which records nothing; one above it belongs to a panic the
	// recovering code raised afterwards.
	recoveredAt int
}

var pending = pendingTraces{byG: map[uint64]*pendingTrace{}}

// maxPending bounds the goroutines with frames waiting: frames of panics
// that compiled code recovered without asking Recovered for them are let
// go at this many.
const maxPending = 4096

// add records frame f of the panic the calling goroutine unwinds; a new
// panic (not continued) starts with the compiled frames where it began.
func (p *pendingTraces) add(f Frame, continued bool) {
	g, depth := goid(), stackDepth()
	var origin []Frame
	if !continued {
		origin = compiledOrigin()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.byG[g]
	if t != nil && t.recoveredAt > 0 {
		if depth < t.recoveredAt { // the frame that recovered
			delete(p.byG, g)
			p.size.Store(int32(len(p.byG)))
			return
		}
		t = nil // a panic raised by the code that recovered
	}
	if t == nil || !continued {
		if len(p.byG) >= maxPending {
			clear(p.byG)
		}
		t = &pendingTrace{frames: origin}
		p.byG[g] = t
		p.size.Store(int32(len(p.byG)))
	}
	t.frames = append(t.frames, f)
}

// take removes and returns the frames recorded for the calling goroutine.
func (p *pendingTraces) take() ([]Frame, bool) {
	if p.size.Load() == 0 {
		return nil, false
	}
	g := goid()
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.byG[g]
	if t == nil {
		return nil, false
	}
	delete(p.byG, g)
	p.size.Store(int32(len(p.byG)))
	if t.recoveredAt > 0 {
		return nil, false
	}
	return t.frames, true
}

// recoveredHere notes that interpreted code on the calling goroutine
// recovered its panic.
func (p *pendingTraces) recoveredHere() {
	g, depth := goid(), stackDepth()
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.byG[g]
	if t == nil {
		if len(p.byG) >= maxPending {
			clear(p.byG)
		}
		t = &pendingTrace{}
		p.byG[g] = t
		p.size.Store(int32(len(p.byG)))
	}
	t.frames, t.recoveredAt = nil, depth
}

// stackDepth returns the number of frames of the calling goroutine's
// stack (up to 1024). It is called on the panic path only.
func stackDepth() int {
	var pcs [1024]uintptr
	return runtime.Callers(0, pcs[:])
}

// goid returns the id of the calling goroutine, from the first line of
// its stack ("goroutine 12 [running]:"). It is called on the panic path
// only.
func goid() uint64 {
	var buf [40]byte
	n := runtime.Stack(buf[:], false)
	b := buf[len("goroutine "):n]
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// panicState tells Mark whether the frame whose deferred calls run it
// unwinds a panic (Yaegi's deferred call in runCfg was called by the
// runtime's gopanic, not on the function's return), and whether that
// panic was raised again by the deferred call of an interpreted frame
// below (continued) rather than begun there.
func panicState() (panicking, continued bool) {
	var pcs [10]uintptr
	n := runtime.Callers(3, pcs[:])
	for i := 0; i < n; i++ {
		if pcKind(pcs[i]) != pcRunDefer {
			continue
		}
		if i+1 >= n || pcKind(pcs[i+1]) != pcGopanic {
			return false, false
		}
		return true, i+2 < n && pcKind(pcs[i+2]) == pcRunDefer
	}
	return false, false
}

// Kinds of return addresses for panicState.
const (
	pcOther uint8 = iota + 1
	pcRunDefer
	pcGopanic
)

// pcKinds caches the kind of each return address seen (a handful: those
// in reflect, Yaegi and the runtime), copied on write.
var pcKinds atomic.Pointer[map[uintptr]uint8]

func pcKind(pc uintptr) uint8 {
	m := pcKinds.Load()
	if m != nil {
		if k, ok := (*m)[pc]; ok {
			return k
		}
	}
	k := pcOther
	if f := runtime.FuncForPC(pc - 1); f != nil {
		switch f.Name() {
		case "runtime.gopanic":
			k = pcGopanic
		case "github.com/traefik/yaegi/interp.runCfg.func1":
			k = pcRunDefer
		}
	}
	for m != nil && len(*m) < 1024 || m == nil {
		n := make(map[uintptr]uint8, 8)
		if m != nil {
			for pc, k := range *m {
				n[pc] = k
			}
		}
		n[pc] = k
		if pcKinds.CompareAndSwap(m, &n) {
			break
		}
		m = pcKinds.Load()
	}
	return k
}
