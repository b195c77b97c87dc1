// Package taskproto is the framed protocol between a zealgo server and its
// task worker processes.
//
// A frame is a 4-byte big-endian length n, then n bytes: one byte of Kind
// and a JSON-encoded Message. Both directions use the same framing over a
// pair of pipes (the worker's standard input and output):
//
//	server -> worker: Init (first), then Run ..., Cancel at the shutdown
//	                  deadline, and finally Stop
//	worker -> server: Ready (answer to Init), then Done for every Run
//	                  and Call when a task asks the server something
//	server -> worker: Reply to each Call
//
// A Writer is safe for concurrent use, so that the goroutines of a worker
// can report their tasks as they finish; a Reader is not.
//
// The package also holds what both sides agree on besides the framing:
// the worker's configuration (WorkerConfig), the classes of failure
// (Fail*) and the JSON rules for a task's arguments and result (json.go).
package taskproto

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Version is the protocol version a worker announces in its Ready message.
const Version = 2

// MaxFrame is the default bound on the size of one frame.
const MaxFrame = 64 << 20

// Kind is the type of a message.
type Kind uint8

// The kinds of messages.
const (
	// KindInit is the server's first message: the worker's configuration.
	KindInit Kind = 1 + iota
	// KindReady is the worker's answer to Init: its pid and version.
	KindReady
	// KindRun asks the worker to run a task.
	KindRun
	// KindDone reports the end of a task: its result or its failure.
	KindDone
	// KindStop asks the worker to finish its running tasks and exit.
	KindStop
	// KindCancel asks the worker to cancel the contexts of its running
	// tasks, so that those that watch them return early. The server sends
	// it when the shutdown deadline has passed.
	KindCancel
	// KindCall is a worker's request to its server, made by the code of
	// a task (a shared-state operation, a broadcast): Op names it, Args
	// carries its JSON body, ID numbers it among the worker's calls.
	KindCall
	// KindReply is the server's answer to a Call of the same ID: Result,
	// or Err.
	KindReply
)

var kindNames = map[Kind]string{KindInit: "init", KindReady: "ready", KindRun: "run", KindDone: "done", KindStop: "stop",
	KindCancel: "cancel", KindCall: "call", KindReply: "reply"}

// String returns the kind's name.
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Message is one message of either direction; each kind uses some fields.
type Message struct {
	// Kind is carried in the frame header, not in the JSON body.
	Kind Kind `json:"-"`
	// ID is the task id (Run, Done), or the number of a Call and its Reply.
	ID int64 `json:"id,omitempty"`
	// Op names what a Call asks of the server (Call).
	Op string `json:"op,omitempty"`
	// Task is the task name, the <name> of /task/<name> (Run).
	Task string `json:"task,omitempty"`
	// Args are the task's positional arguments as a JSON array (Run),
	// or a Call's body (Call).
	Args json.RawMessage `json:"args,omitempty"`
	// Meta is what the dispatcher attaches to a task, such as the id of
	// the request that dispatched it (Run).
	Meta map[string]string `json:"meta,omitempty"`
	// Result is the task's JSON-encoded return value (Done), or a
	// Call's answer (Reply).
	Result json.RawMessage `json:"result,omitempty"`
	// Fail classifies a failed task: FailError, FailPanic, FailArgs,
	// FailLoad or FailResult; empty when the task succeeded (Done).
	Fail string `json:"fail,omitempty"`
	// Err describes the failure (Done, Reply).
	Err string `json:"err,omitempty"`
	// PID is the worker's process id (Ready).
	PID int `json:"pid,omitempty"`
	// Version is the worker's protocol version (Ready).
	Version int `json:"version,omitempty"`
	// Config is the worker's configuration (Init).
	Config json.RawMessage `json:"config,omitempty"`
}

// Errors of the framing.
var (
	// ErrFrameTooLarge is returned for a frame over the size bound, on
	// either side.
	ErrFrameTooLarge = errors.New("taskproto: frame too large")
	// ErrBadFrame is returned for a frame that cannot be decoded.
	ErrBadFrame = errors.New("taskproto: bad frame")
)

// Writer writes frames. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	max int
	buf []byte
}

// NewWriter returns a Writer on w that refuses frames over max bytes
// (MaxFrame when max <= 0).
func NewWriter(w io.Writer, max int) *Writer {
	if max <= 0 {
		max = MaxFrame
	}
	return &Writer{w: w, max: max}
}

// Write encodes m as one frame. A frame over the bound is refused with
// ErrFrameTooLarge and nothing is written.
func (w *Writer) Write(m *Message) error {
	if _, ok := kindNames[m.Kind]; !ok {
		return fmt.Errorf("%w: unknown kind %d", ErrBadFrame, m.Kind)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("taskproto: encode %s: %w", m.Kind, err)
	}
	n := 1 + len(body)
	if n > w.max {
		return fmt.Errorf("%w: %s of %d bytes (bound %d)", ErrFrameTooLarge, m.Kind, n, w.max)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = binary.BigEndian.AppendUint32(w.buf[:0], uint32(n))
	w.buf = append(w.buf, byte(m.Kind))
	w.buf = append(w.buf, body...)
	_, err = w.w.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil // do not keep a large buffer around
	}
	return err
}

// Reader reads frames. It is not safe for concurrent use.
type Reader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewReader returns a Reader on r that refuses frames over max bytes
// (MaxFrame when max <= 0).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = MaxFrame
	}
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Read returns the next message. At the end of the stream between two
// frames it returns io.EOF; a stream cut inside a frame gives
// io.ErrUnexpectedEOF.
func (r *Reader) Read() (*Message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r.r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n < 1 {
		return nil, fmt.Errorf("%w: empty frame", ErrBadFrame)
	}
	if n > r.max {
		return nil, fmt.Errorf("%w: %d bytes (bound %d)", ErrFrameTooLarge, n, r.max)
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	buf := r.buf[:n]
	if _, err := io.ReadFull(r.r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if n > 1<<20 {
		r.buf = nil
	}
	m := &Message{Kind: Kind(buf[0])}
	if _, ok := kindNames[m.Kind]; !ok {
		return nil, fmt.Errorf("%w: unknown kind %d", ErrBadFrame, buf[0])
	}
	if err := json.Unmarshal(buf[1:], m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadFrame, m.Kind, err)
	}
	return m, nil
}
