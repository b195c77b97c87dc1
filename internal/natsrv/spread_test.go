package natsrv

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zealgo/zealgo/internal/testutil"
)

// lockedBuffer is a log buffer safe for the spreader's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSpreaderSpreadsLeaders: on a three-node cluster, three task-like
// streams (with a durable consumer each) and two others, all led by one
// node, are spread by the Spreader: each group over three nodes, each
// consumer on its stream's leader, and the moves logged once. After a
// node is killed, the streams it led are led elsewhere; once it is back,
// the leaders are spread over the three nodes again.
func TestSpreaderSpreadsLeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nats-server processes")
	}
	nodes, urls := testutil.NATSCluster(t, 3)
	ctx := context.Background()
	conn, err := Connect(ctx, urls, ConnectOptions{Name: t.Name(), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	names := []string{"T", "T_1", "T_2", "R", "I"}
	for _, name := range names {
		err := WhileForming(ctx, slog.Default(), name, func(ctx context.Context) error {
			_, err := conn.JS.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"s." + name}, Replicas: 3})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "T") {
			_, err := conn.JS.CreateOrUpdateConsumer(ctx, name, jetstream.ConsumerConfig{Durable: "workers", Replicas: 3,
				AckPolicy: jetstream.AckExplicitPolicy})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// Crowd every leader on n1.
	testutil.WaitFor(t, 60*time.Second, "every stream led by n1", func() bool {
		led := leaders(t, conn)
		for _, name := range names {
			if l := led[name]; l != "" && l != "n1" {
				_ = stepDown(ctx, conn.JS, "STREAM.LEADER.STEPDOWN."+name, "n1")
			}
		}
		led = leaders(t, conn)
		return led["T"] == "n1" && led["T_1"] == "n1" && led["T_2"] == "n1" && led["R"] == "n1" && led["I"] == "n1"
	})
	logs := &lockedBuffer{}
	s := StartSpreader(conn.JS, SpreadConfig{Groups: [][]string{{"T", "T_*"}, {"R", "I"}}, Every: 500 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	defer s.Stop()
	var why string
	if !testutil.Poll(60*time.Second, func() bool { why = spreadNow(t, conn); return why == "" }) {
		t.Fatalf("not spread: %s; log:\n%s", why, logs.String())
	}
	testutil.WaitFor(t, 10*time.Second, "the moves logged", func() bool {
		return strings.Contains(logs.String(), "stream leaders spread over the servers")
	})
	if n := strings.Count(logs.String(), "stream leaders spread"); n != 1 {
		t.Errorf("the moves were logged %d times, want once:\n%s", n, logs.String())
	}
	t.Logf("log: %s", logs.String())
	led := leaders(t, conn)
	for _, n := range nodes {
		if n.Name == led["T"] {
			n.Kill()
		}
	}
	dead := led["T"]
	if !testutil.Poll(60*time.Second, func() bool {
		now := leaders(t, conn)
		for _, name := range names {
			if now[name] == "" || now[name] == dead {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("no new leaders after the kill of %s: %v", dead, leaders(t, conn))
	}
	// The node comes back: the leaders are spread over the three again.
	for _, n := range nodes {
		if n.Name == dead {
			n.Restart(t)
		}
	}
	if !testutil.Poll(90*time.Second, func() bool { why = spreadNow(t, conn); return why == "" }) {
		t.Fatalf("not spread again after %s came back: %s; log:\n%s", dead, why, logs.String())
	}
}

// leaders returns the leader of each stream.
func leaders(t *testing.T, conn *Conn) map[string]string {
	t.Helper()
	out := map[string]string{}
	list := conn.JS.ListStreams(context.Background())
	for info := range list.Info() {
		if info.Cluster != nil {
			out[info.Config.Name] = info.Cluster.Leader
		}
	}
	return out
}

// spreadNow returns why the test's streams are not spread ("": they are).
func spreadNow(t *testing.T, conn *Conn) string {
	led := leaders(t, conn)
	for _, g := range [][]string{{"T", "T_1", "T_2"}, {"R", "I"}} {
		seen := map[string]bool{}
		for _, name := range g {
			if led[name] == "" || seen[led[name]] {
				return fmt.Sprintf("leaders %v", led)
			}
			seen[led[name]] = true
		}
	}
	for _, name := range []string{"T", "T_1", "T_2"} {
		c, err := conn.JS.Consumer(context.Background(), name, "workers")
		if err != nil {
			return err.Error()
		}
		if l := c.CachedInfo().Cluster.Leader; l != led[name] {
			return fmt.Sprintf("consumer of %s led by %s, the stream by %s", name, l, led[name])
		}
	}
	return ""
}
