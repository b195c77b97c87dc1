package taskproto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func frame(kind byte, body string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(1+len(body)))
	b = append(b, kind)
	return append(b, body...)
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
	}{
		{"init", Message{Kind: KindInit, Config: []byte(`{"root":"/srv/app","coroutine":true}`)}},
		{"ready", Message{Kind: KindReady, PID: 4242, Version: Version}},
		{"run", Message{Kind: KindRun, ID: 7, Task: "report", Args: []byte(`[1,"two",{"three":3}]`)}},
		{"run without args", Message{Kind: KindRun, ID: 8, Task: "noop"}},
		{"done with result", Message{Kind: KindDone, ID: 7, Result: []byte(`{"ok":true}`)}},
		{"done with failure", Message{Kind: KindDone, ID: 9, Fail: "panic", Err: "boom\nsecond line"}},
		{"stop", Message{Kind: KindStop}},
		{"cancel", Message{Kind: KindCancel}},
		{"large id and unicode", Message{Kind: KindRun, ID: 1<<62 + 1, Task: "t", Args: []byte(`["héllo \u2028 世界"]`)}},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, 0)
	for _, tt := range tests {
		if err := w.Write(&tt.msg); err != nil {
			t.Fatalf("%s: write: %v", tt.name, err)
		}
	}
	r := NewReader(&buf, 0)
	for _, tt := range tests {
		got, err := r.Read()
		if err != nil {
			t.Fatalf("%s: read: %v", tt.name, err)
		}
		if !reflect.DeepEqual(*got, tt.msg) {
			t.Errorf("%s: got %+v, want %+v", tt.name, *got, tt.msg)
		}
	}
	if _, err := r.Read(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func TestReadErrors(t *testing.T) {
	valid := frame(byte(KindDone), `{"id":1}`)
	tests := []struct {
		name  string
		input []byte
		max   int
		want  error  // errors.Is target
		text  string // in the message
	}{
		{"empty stream", nil, 0, io.EOF, ""},
		{"cut in the header", valid[:3], 0, io.ErrUnexpectedEOF, ""},
		{"cut in the body", valid[:len(valid)-2], 0, io.ErrUnexpectedEOF, ""},
		{"header only", valid[:4], 0, io.ErrUnexpectedEOF, ""},
		{"zero length", []byte{0, 0, 0, 0}, 0, ErrBadFrame, "empty frame"},
		{"over the bound", frame(byte(KindRun), strings.Repeat("x", 100)), 50, ErrFrameTooLarge, "bound 50"},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff, 1}, 0, ErrFrameTooLarge, ""},
		{"unknown kind", frame(99, `{}`), 0, ErrBadFrame, "unknown kind 99"},
		{"kind zero", frame(0, `{}`), 0, ErrBadFrame, "unknown kind 0"},
		{"not json", frame(byte(KindRun), `{"id":`), 0, ErrBadFrame, "run"},
		{"wrong field type", frame(byte(KindRun), `{"id":"seven"}`), 0, ErrBadFrame, "run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(tt.input), tt.max).Read()
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if tt.text != "" && !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("error %q does not mention %q", err, tt.text)
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		max  int
		want error
	}{
		{"unknown kind", Message{Kind: 42}, 0, ErrBadFrame},
		{"over the bound", Message{Kind: KindRun, Args: []byte(`["` + strings.Repeat("a", 200) + `"]`)}, 100, ErrFrameTooLarge},
		{"invalid raw json", Message{Kind: KindDone, Result: []byte(`{nope`)}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := NewWriter(&buf, tt.max).Write(&tt.msg)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if buf.Len() != 0 {
				t.Fatalf("%d bytes written for a refused frame", buf.Len())
			}
		})
	}
}

// TestConcurrentWriters checks that frames written from many goroutines
// arrive whole: every message is read back intact, none interleaved.
func TestConcurrentWriters(t *testing.T) {
	pr, pw := io.Pipe()
	w := NewWriter(pw, 0)
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id := int64(g*each + i)
				res := []byte(`"` + strings.Repeat("r", int(id%300)) + `"`)
				if err := w.Write(&Message{Kind: KindDone, ID: id, Result: res}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); pw.Close() }()
	r := NewReader(pr, 0)
	seen := map[int64]bool{}
	for {
		m, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := `"` + strings.Repeat("r", int(m.ID%300)) + `"`; string(m.Result) != want || m.Kind != KindDone {
			t.Fatalf("message %d damaged: %s %q", m.ID, m.Kind, m.Result)
		}
		if seen[m.ID] {
			t.Fatalf("message %d twice", m.ID)
		}
		seen[m.ID] = true
	}
	if len(seen) != writers*each {
		t.Fatalf("read %d messages, want %d", len(seen), writers*each)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindInit: "init", KindReady: "ready", KindRun: "run", KindDone: "done", KindStop: "stop", KindCancel: "cancel", 0: "kind(0)", 200: "kind(200)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", uint8(k), got, want)
		}
	}
}
