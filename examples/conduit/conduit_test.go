// Package conduit_test runs the Conduit example over real HTTP, on the
// stock `zealgo serve` (interpreted) and on the binary `zealgo build`
// makes of it, through every endpoint of the RealWorld API spec.
package conduit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// secret is the HS256 key of the tests' tokens (CONDUIT_JWT_SECRET).
const secret = "conduit-test-secret-of-at-least-32-bytes"

// tmp holds the binaries the tests build (TestMain removes it).
var tmp string

// binary is a program the tests build once.
type binary struct {
	once sync.Once
	path string
	err  error
}

var zealgo, conduit binary

// get builds the binary at path with cmd the first time.
func (b *binary) get(t *testing.T, path string, cmd ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds zealgo and the example")
	}
	b.once.Do(func() {
		began := time.Now()
		defer func() { t.Logf("%s: %v", strings.Join(cmd[:2], " "), time.Since(began).Round(time.Millisecond)) }()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, cmd[0], cmd[1:]...).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("%s: %w\n%s", strings.Join(cmd, " "), err, out)
		}
		b.path = path
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// zealgoCommand builds the stock zealgo command.
func zealgoCommand(t *testing.T) string {
	bin := filepath.Join(tmp, "zealgo")
	return zealgo.get(t, bin, "go", "build", "-o", bin, "github.com/zealgo/zealgo/cmd/zealgo")
}

// conduitBinary builds the example with `zealgo build`.
func conduitBinary(t *testing.T) string {
	z, bin := zealgoCommand(t), filepath.Join(tmp, "conduit")
	return conduit.get(t, bin, z, "build", "--root", ".", "--dir", filepath.Join(tmp, "gen"), "-o", bin)
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "conduit-test-")
	if err != nil {
		panic(err)
	}
	tmp = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestConduitServe: the example on the stock `zealgo serve`, which
// interprets its handler files.
func TestConduitServe(t *testing.T) {
	base, logs := start(t, zealgoCommand(t))
	began := time.Now()
	runSpec(t, base)
	t.Logf("%d requests in %v", len(spec), time.Since(began).Round(time.Millisecond))
	if strings.Contains(logs.String(), "compiled into the binary") {
		t.Errorf("zealgo serve served compiled files:\n%s", logs.String())
	}
}

// TestConduitBuilt: the example on the binary `zealgo build` makes of it,
// which serves its handler files compiled.
func TestConduitBuilt(t *testing.T) {
	base, logs := start(t, conduitBinary(t))
	began := time.Now()
	runSpec(t, base)
	t.Logf("%d requests in %v", len(spec), time.Since(began).Round(time.Millisecond))
	if !strings.Contains(logs.String(), "compiled into the binary") {
		t.Errorf("the built binary does not say it serves compiled files:\n%s", logs.String())
	}
}

// start runs `bin serve` on the example with a fresh data directory (a
// new SQLite database) and returns its API's base URL once it answers.
func start(t *testing.T, bin string) (string, *testutil.Buffer) {
	t.Helper()
	return serveExample(t, bin, "--supervise=false", "--allow-origin", frontEnd)
}

// serveExample runs bin serve on the example with the flags given after
// the root, address and data directory, and waits until it answers.
func serveExample(t *testing.T, bin string, flags ...string) (string, *testutil.Buffer) {
	t.Helper()
	addr := testutil.FreeAddr(t)
	logs := &testutil.Buffer{}
	cmd := exec.Command(bin, append([]string{"serve", "--root", ".", "--addr", addr, "--data", t.TempDir()}, flags...)...)
	cmd.Env = append(os.Environ(), "CONDUIT_JWT_SECRET="+secret)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	base := "http://" + addr + "/api"
	testutil.WaitFor(t, 30*time.Second, "the example to answer", func() bool {
		status, _, err := send("GET", base+"/tags", "", "")
		return err == nil && status == 200
	})
	return base, logs
}
