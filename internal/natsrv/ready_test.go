package natsrv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zealgo/zealgo/internal/testutil"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWhileFormingWaitsForTheThirdNode: on a cluster of three nodes of
// which two run, a stream with 3 replicas cannot be placed: WhileForming
// gives up at its context's end with an error that is ErrNotReady and
// ErrTooFewServers, and, asked again, waits until the third node joins
// and then creates the stream.
func TestWhileFormingWaitsForTheThirdNode(t *testing.T) {
	routes := make([]string, 3)
	for i := range routes {
		routes[i] = "nats-route://" + testutil.FreeAddr(t)
	}
	node := func(i int) *Server {
		var others []string
		for j, r := range routes {
			if j != i {
				others = append(others, r)
			}
		}
		return start(t, Config{DataDir: t.TempDir(), Name: fmt.Sprintf("n%d", i+1),
			Cluster: ClusterConfig{Name: "zt", Listen: routes[i][len("nats-route://"):], Routes: others}})
	}
	n1, n2 := node(0), node(1)
	defer n1.Shutdown()
	defer n2.Shutdown()
	conn, err := Connect(context.Background(), n1.URL(), ConnectOptions{Name: t.Name(), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	create := func(ctx context.Context) error {
		_, err := conn.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3"}, Replicas: 3})
		return err
	}
	testutil.WaitFor(t, 30*time.Second, "the two nodes to elect a JetStream leader", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := conn.JS.AccountInfo(ctx)
		return err == nil
	})
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	err = WhileForming(ctx, log, "stream R3", create)
	cancel()
	if !errors.Is(err, ErrNotReady) || !errors.Is(err, ErrTooFewServers) {
		t.Fatalf("two nodes of three: %v; want ErrNotReady and ErrTooFewServers", err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		done <- WhileForming(ctx, log, "stream R3", create)
	}()
	before := len(logs.String())
	testutil.WaitFor(t, 10*time.Second, "WhileForming to try again", func() bool {
		return len(logs.String()) > before
	})
	n3 := node(2)
	defer n3.Shutdown()
	if err := <-done; err != nil {
		t.Fatalf("with the third node: %v", err)
	}
	st, err := conn.JS.Stream(context.Background(), "R3")
	if err != nil {
		t.Fatal(err)
	}
	if r := st.CachedInfo().Config.Replicas; r != 3 {
		t.Errorf("replicas %d, want 3", r)
	}
}

// TestWhileFormingKeepsTheClusterAnswer: when its context ends during an
// attempt, WhileForming reports what the cluster said before (too few
// servers), not the attempt's timeout.
func TestWhileFormingKeepsTheClusterAnswer(t *testing.T) {
	calls := 0
	f := func(ctx context.Context) error {
		calls++
		if calls == 1 {
			return errNoPeers
		}
		<-ctx.Done()
		return ctx.Err()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := WhileForming(ctx, slog.New(slog.NewTextHandler(&syncBuffer{}, nil)), "stream X", f)
	if !errors.Is(err, ErrNotReady) || !errors.Is(err, ErrTooFewServers) {
		t.Fatalf("got %v; want ErrNotReady and ErrTooFewServers", err)
	}
	if calls != 2 {
		t.Errorf("%d calls, want 2", calls)
	}
}
