package jstask

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/testutil"
)

// TestKeyRememberedAcrossServerRestart: a keyed task runs; after a clean
// restart of the server, which rebuilds JetStream's table of message ids
// from the tasks still stored (the one that ran is gone), a second
// dispatch of the key within the duplicate window is still refused with
// ErrDuplicate, and runs nothing; once the window has passed, the key is
// accepted again.
func TestKeyRememberedAcrossServerRestart(t *testing.T) {
	dir := t.TempDir()
	srv, err := natsrv.Start(natsrv.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// The server running at the end stops last, after the client and the
	// worker: stopped with the server gone, they would wait out their
	// requests' timeouts.
	t.Cleanup(func() {
		if srv != nil {
			srv.Shutdown()
		}
	})
	u, _ := url.Parse(srv.URL())
	port, _ := strconv.Atoi(u.Port())
	f := &fixture{t: t, url: srv.URL(), mark: t.TempDir()}
	f.conn = connect(t, f.url)
	ctx := context.Background()
	cfg := Config{Prefix: "keys", DuplicateWindow: 4 * time.Second}
	o := &outcomes{byID: map[int64][]outcome{}, js: f.conn.JS}
	c, err := Open(ctx, f.conn.JS, cfg, "i1", o.finish)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d := &deliveries{seen: map[int64][]int{}}
	inProcessWorker(t, f, c.cfg, d)
	first := dispatchKeyed(t, c, "order-7")
	o.wait(t, 10*time.Second, first)
	srv.Shutdown()
	srv, err = natsrv.Start(natsrv.Config{DataDir: dir, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	testutil.WaitFor(t, 10*time.Second, "an answer from the restarted server", func() bool {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		id, err = c.Dispatch(actx, Task{Handler: "/task/keyed", Key: "order-7"})
		return err == nil || errors.Is(err, ErrDuplicate)
	})
	if !errors.Is(err, ErrDuplicate) {
		t.Fatalf("dispatch of the key after the restart: id %d, %v; want ErrDuplicate", id, err)
	}
	if runs := len(d.seen); runs != 1 {
		t.Errorf("%d keyed tasks ran, want 1", runs)
	}
	testutil.WaitFor(t, 15*time.Second, "the key accepted once the window passed", func() bool {
		id, err = c.Dispatch(ctx, Task{Handler: "/task/keyed", Key: "order-7"})
		return err == nil
	})
}
