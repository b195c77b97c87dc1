// Package testutil holds helpers shared by zealgo's tests: a log buffer
// safe for concurrent writers, a file tree written into a temporary
// directory, and polling with a deadline.
package testutil

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Buffer collects output written from several goroutines (a server's log,
// a child process's stderr) while a test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// WriteTree writes files, slash-separated paths to contents, into a new
// temporary directory and returns it.
func WriteTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// WaitFor polls f every few milliseconds until it returns true, and fails
// the test if that takes longer than within.
func WaitFor(t testing.TB, within time.Duration, what string, f func() bool) {
	t.Helper()
	WaitForEvery(t, within, pollEvery, what, f)
}

// WaitForEvery is WaitFor calling f every interval (PollEvery).
func WaitForEvery(t testing.TB, within, every time.Duration, what string, f func() bool) {
	t.Helper()
	if !PollEvery(within, every, f) {
		t.Fatalf("gave up after %v waiting for %s", within, what)
	}
}

// pollEvery is how often Poll and WaitFor call their condition.
const pollEvery = 5 * time.Millisecond

// Poll calls f every few milliseconds until it returns true, for at most
// within, and reports whether it did. It is WaitFor for a caller that
// words its own failure, or that runs outside the test's goroutine, where
// t.Fatal must not be called.
func Poll(within time.Duration, f func() bool) bool {
	return PollEvery(within, pollEvery, f)
}

// PollEvery is Poll calling f every interval: for a costly f, such as
// one that scans a process's whole log, which a poll every few
// milliseconds would run back to back, taking a core from the processes
// under test (and from the goroutines that read their logs).
func PollEvery(within, every time.Duration, f func() bool) bool {
	deadline := time.Now().Add(within)
	for !f() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
	return true
}

// NeedProgram returns the path of the program name (a path, or a name
// looked up in PATH). When it is missing the test is skipped with how to
// install it, except under CI (the environment variable CI is set), where
// .ci/run installs it and a missing program fails the test: a skipped
// browser or Redis test must not pass for a green run.
func NeedProgram(t testing.TB, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed (%s); CI must install it", name, install)
	}
	t.Skipf("skipping: %s is not installed (%s)", name, install)
	return ""
}

// FreeAddr returns a loopback address, 127.0.0.1:port, on which nothing
// listens at the moment: for a server a test starts as a process, or for
// a peer that must be unreachable.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
