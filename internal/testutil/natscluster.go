package testutil

import (
	"fmt"
	"go/build"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// NATSNode is one standalone nats-server process of a test cluster.
type NATSNode struct {
	Name   string // the server's name, as stream leaders are named
	URL    string // its client URL, nats://127.0.0.1:port
	Logs   *Buffer
	cmd    *exec.Cmd
	exited chan struct{}
}

// Restart starts the node again, after Kill, on the same ports and data.
func (n *NATSNode) Restart(t testing.TB) {
	t.Helper()
	n.cmd = exec.Command(n.cmd.Path, n.cmd.Args[1:]...)
	n.cmd.Stdout, n.cmd.Stderr = n.Logs, n.Logs
	n.exited = make(chan struct{})
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd, exited := n.cmd, n.exited
	go func() { _ = cmd.Wait(); close(exited) }()
}

// Kill ends the node with SIGKILL, by its pid, and waits for it.
func (n *NATSNode) Kill() {
	_ = syscall.Kill(n.cmd.Process.Pid, syscall.SIGKILL)
	<-n.exited
}

// NATSCluster starts a cluster of size standalone nats-server processes
// ($GOPATH/bin/nats-server or nats-server on the PATH) on free loopback
// ports, with JetStream in temporary directories; the test's end kills
// them by their pids. It returns the nodes and the client URLs of all,
// comma-separated.
func NATSCluster(t testing.TB, size int) ([]*NATSNode, string) {
	t.Helper()
	bin := filepath.Join(build.Default.GOPATH, "bin", "nats-server")
	if _, err := exec.LookPath(bin); err != nil {
		bin = NeedProgram(t, "nats-server", "go install github.com/nats-io/nats-server/v2@v2.15.2")
	}
	routes := make([]string, size)
	for i := range routes {
		routes[i] = "nats://" + FreeAddr(t)
	}
	nodes := make([]*NATSNode, size)
	var urls []string
	for i := range nodes {
		addr := FreeAddr(t)
		host, port, _ := strings.Cut(addr, ":")
		n := &NATSNode{Name: fmt.Sprintf("n%d", i+1), URL: "nats://" + addr, Logs: &Buffer{}, exited: make(chan struct{})}
		var others []string
		for j, r := range routes {
			if j != i {
				others = append(others, r)
			}
		}
		n.cmd = exec.Command(bin, "-n", n.Name, "-a", host, "-p", port, "-js", "-sd", filepath.Join(t.TempDir(), "js"),
			"--cluster_name", "zt", "--cluster", routes[i], "--routes", strings.Join(others, ","))
		n.cmd.Stdout, n.cmd.Stderr = n.Logs, n.Logs
		if err := n.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = n.cmd.Wait(); close(n.exited) }()
		t.Cleanup(func() {
			n.Kill()
			if t.Failed() {
				t.Logf("nats-server %s log (tail):\n%s", n.Name, tailLines(n.Logs.String(), 15))
			}
		})
		nodes[i], urls = n, append(urls, n.URL)
	}
	WaitFor(t, 30*time.Second, "the NATS cluster to elect its JetStream leader", func() bool {
		for _, n := range nodes {
			if strings.Contains(n.Logs.String(), "JetStream cluster new metadata leader") ||
				strings.Contains(n.Logs.String(), "Self is new JetStream cluster metadata leader") {
				return true
			}
		}
		return false
	})
	return nodes, strings.Join(urls, ",")
}

func tailLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
