package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// TestSampleDurability builds the sample, runs it as a real process on a
// loopback port with a temporary data directory, registers an account and
// adds notes, kills the process with SIGKILL, starts it again, and finds
// the account and its notes there; a form log-in without an Accept header
// (the spec's check) then redirects.
func TestSampleDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the sample binary")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := sampleBinary(t) // the container's build, shared (build_test.go)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")

	first := startSample(t, bin, root, data)
	c := first.client(t)
	uid := c.register("durable", "password-d")
	for i := range 3 {
		c.addNote(fmt.Sprintf("note %d", i), "kept across a crash")
	}
	cookie := c.session()
	first.kill(t)
	if _, err := os.Stat(filepath.Join(data, "zealgo.db")); err != nil {
		t.Fatalf("no database file: %v", err)
	}

	second := startSample(t, bin, root, data)
	c2 := second.client(t)
	r := c2.json("POST", "/api/learn/login", map[string]any{"username": "durable", "password": "password-d"})
	if r.Status != http.StatusOK || r.JSON(t)["user_id"] != float64(uid) {
		t.Fatalf("login after the crash: %d %s", r.Status, r.Body)
	}
	r = c2.json("GET", "/api/learn/notes", nil)
	var notes []map[string]any
	if err := json.Unmarshal([]byte(r.Body), &notes); err != nil || len(notes) != 3 {
		t.Fatalf("notes after the crash: %d %s", r.Status, r.Body)
	}
	for _, n := range notes {
		if !strings.HasPrefix(n["title"].(string), "note ") || n["body"] != "kept across a crash" {
			t.Errorf("note %v", n)
		}
	}
	// The spec's check: a form log-in (curl-like, no Accept) redirects.
	if r := second.client(t).curlForm("/api/learn/login", "", url.Values{"username": {"durable"}, "password": {"password-d"}}); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/learn/notes" {
		t.Errorf("form login after the crash: %d Location %q %.80s", r.Status, r.Header.Get("Location"), r.Body)
	}
	// The session from before the crash still identifies the account.
	old := second.client(t)
	old.jar.SetCookies(mustURL(second.URL), []*http.Cookie{{Name: sessionCookie, Value: cookie, Path: "/"}})
	if r := old.json("GET", "/api/learn/notes", nil); r.Status != http.StatusOK {
		t.Errorf("the session from before the crash: %d %s", r.Status, r.Body)
	}
	second.kill(t)
}

// sampleProcess is the sample binary running as a child process.
type sampleProcess struct {
	sampleServer
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has been reaped
	err    error         // cmd.Wait's, once exited is closed
}

// startSample runs the binary on a free loopback port and waits until it
// answers.
func startSample(t *testing.T, bin, root, data string) *sampleProcess {
	t.Helper()
	addr := testutil.FreeAddr(t)
	log := &testutil.Buffer{}
	// Unsupervised: SIGKILL ends the serving process itself, mid-write,
	// rather than its supervisor (whose child would then stop gracefully).
	cmd := exec.Command(bin, "serve", "--root", root, "--addr", addr, "--data", data, "--supervise=false")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &sampleProcess{sampleServer: sampleServer{URL: "http://" + addr, Log: log}, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			<-p.exited
		}
		if t.Failed() {
			t.Logf("sample log (%s):\n%s", addr, log.String())
		}
	})
	testutil.WaitFor(t, 20*time.Second, "the sample to answer on "+addr, func() bool {
		select {
		case <-p.exited:
			t.Fatalf("the sample exited (%v):\n%s", p.err, log.String())
		default:
		}
		resp, err := http.Get(p.URL + "/api/learn/notes")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized
	})
	return p
}

// kill sends SIGKILL to the process by its PID and reaps it.
func (p *sampleProcess) kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the sample outlived SIGKILL")
	}
	var ee *exec.ExitError
	if err := p.err; !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the sample did not die of SIGKILL: %v", p.err)
	}
}

func (p *sampleProcess) client(t *testing.T) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: p.URL, jar: jar, c: &http.Client{
		Jar:           jar,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}
