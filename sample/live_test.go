package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestSampleLiveAPI: /api/learn/live refuses a caller who is not logged
// in (401, before any upgrade); a logged-in account's WebSocket hears
// "changed" when a note of its own is added, updated or deleted, and
// nothing of another account's notes.
func TestSampleLiveAPI(t *testing.T) {
	srv := newSampleServer(t)
	ws := "ws" + strings.TrimPrefix(srv.URL, "http") + "/api/learn/live"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, resp, err := websocket.Dial(ctx, ws, nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("logged out: %v %v", err, resp)
	}
	ada, bob := srv.client(t), srv.client(t)
	ada.register("live_ada", "live-pass-1")
	bob.register("live_bob", "live-pass-1")
	c, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: ada.c})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	bob.addNote("not for ada", "")
	n := ada.addNote("for ada", "")
	if _, b, err := c.Read(ctx); err != nil || string(b) != "changed" {
		t.Fatalf("after adding a note: %q %v", b, err)
	}
	if r := ada.json("DELETE", noteURL(n["id"]), nil); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if _, b, err := c.Read(ctx); err != nil || string(b) != "changed" {
		t.Fatalf("after deleting it: %q %v", b, err)
	}
	short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	defer stop()
	if _, b, err := c.Read(short); err == nil {
		t.Fatalf("an extra message %q (bob's note?)", b)
	}
}

// checkLiveBuilt: the built sample's /api/learn/live (compiled, under
// serve's timeouts) hears a note added by the logged-in client c.
func checkLiveBuilt(t *testing.T, c *client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(c.base, "http")+"/api/learn/live", &websocket.DialOptions{HTTPClient: c.c})
	if err != nil {
		t.Fatalf("built: WebSocket /api/learn/live: %v", err)
	}
	defer ws.CloseNow()
	c.addNote("live", "built")
	if _, b, err := ws.Read(ctx); err != nil || string(b) != "changed" {
		t.Errorf("built: the WebSocket got %q %v, want changed", b, err)
	}
}
