package natsrv

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zealgo/zealgo/internal/testutil"
)

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServerKeepsStreamsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	srv := start(t, Config{DataDir: dir})
	if !strings.HasPrefix(srv.URL(), "nats://127.0.0.1:") {
		t.Errorf("URL %q, want a loopback address", srv.URL())
	}
	ctx := context.Background()
	conn, err := Connect(ctx, srv.URL(), ConnectOptions{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.JS.Publish(ctx, "s", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	srv.Shutdown()
	if !conn.NC.IsClosed() {
		t.Error("connection still open after Close")
	}

	srv = start(t, Config{DataDir: dir})
	defer srv.Shutdown()
	conn, err = Connect(ctx, srv.URL(), ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := conn.JS.Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := st.GetMsg(ctx, 1)
	if err != nil || string(msg.Data) != "kept" {
		t.Fatalf("after restart: %v %v", msg, err)
	}
}

func TestStartRefusesBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "needs a data directory"},
		{Config{DataDir: t.TempDir(), Host: "0.0.0.0"}, "loopback only"},
		{Config{DataDir: t.TempDir(), Host: "192.0.2.1"}, "loopback only"},
		{Config{DataDir: t.TempDir(), Port: 70000}, "out of range"},
	} {
		if _, err := Start(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "zealgo: nats: ") {
			t.Errorf("Start(%+v) = %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}
}

func TestStartReportsPortInUse(t *testing.T) {
	srv := start(t, Config{DataDir: t.TempDir()})
	defer srv.Shutdown()
	p := portOf(t, strings.TrimPrefix(srv.URL(), "nats://"))
	began := time.Now()
	_, err := Start(Config{DataDir: t.TempDir(), Port: p, ReadyTimeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("second server on port %d: %v", p, err)
	}
	if time.Since(began) > 30*time.Second {
		t.Errorf("the failure took %v: it waited for the ready timeout", time.Since(began))
	}
}

func TestTokenIsRequired(t *testing.T) {
	srv := start(t, Config{DataDir: t.TempDir(), Token: "s3cret"})
	defer srv.Shutdown()
	ctx := context.Background()
	if _, err := Connect(ctx, srv.URL(), ConnectOptions{Timeout: time.Minute}); err == nil || !strings.Contains(err.Error(), "refused the connection: nats: Authorization Violation") {
		t.Fatalf("without the token: %v", err)
	}
	conn, err := Connect(ctx, srv.URL(), ConnectOptions{Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
}

func TestConnectGivesUpWithAClearError(t *testing.T) {
	addr := testutil.FreeAddr(t)
	_, err := Connect(context.Background(), "nats://"+addr, ConnectOptions{Timeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "zealgo: nats: cannot connect to nats://"+addr) {
		t.Fatalf("err = %v", err)
	}
}

func TestConnectWaitsForAServerStartingLater(t *testing.T) {
	addr := testutil.FreeAddr(t)
	port := portOf(t, addr)
	var wg sync.WaitGroup
	var conn *Conn
	var err error
	wg.Go(func() {
		conn, err = Connect(context.Background(), "nats://"+addr, ConnectOptions{Timeout: 20 * time.Second})
	})
	// Connect is trying: its attempt reaches a listener that closes it.
	ln, lerr := net.Listen("tcp", addr)
	if lerr != nil {
		t.Fatal(lerr)
	}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, aerr := ln.Accept()
	if aerr != nil {
		t.Fatalf("no connection attempt: %v", aerr)
	}
	c.Close()
	ln.Close()
	srv := start(t, Config{DataDir: t.TempDir(), Port: port})
	defer srv.Shutdown()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.JS.AccountInfo(context.Background()); err != nil {
		t.Fatal(err)
	}
}
