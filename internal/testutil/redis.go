package testutil

import (
	"context"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartRedis runs redis-server on a free loopback port with its own
// directory and no persistence, stops it by PID when the test ends, and
// returns its address, 127.0.0.1:port. Without redis-server the test is
// skipped, or fails under CI (see NeedProgram).
func StartRedis(t testing.TB) string {
	t.Helper()
	bin := NeedProgram(t, "redis-server", "apt-get install redis-server")
	addr := FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	logs := &Buffer{}
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--dir", t.TempDir(),
		"--save", "", "--appendonly", "no", "--protected-mode", "yes")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	WaitFor(t, 5*time.Second, "redis-server to answer; log:\n"+logs.String(), func() bool {
		return c.Ping(context.Background()).Err() == nil
	})
	return addr
}
