package sessionstore_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/zealgo/zealgo/internal/natskv"
	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/sessionstore"
	"github.com/zealgo/zealgo/internal/sessionstore/storetest"
	"github.com/zealgo/zealgo/internal/testutil"
)

func TestFileBackend(t *testing.T) {
	storetest.Run(t, sessionstore.NewFileBackend(t.TempDir()))
}

func TestRedisBackend(t *testing.T) {
	b, err := sessionstore.NewRedisBackend(testutil.StartRedis(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storetest.Run(t, b)
}

// TestNATSBackend: sessions in a key-value bucket of an embedded NATS
// server keep the contract, and a second connection (another instance)
// reads what the first saved.
func TestNATSBackend(t *testing.T) {
	srv, err := natsrv.Start(natsrv.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	open := func() *sessionstore.NATSBackend {
		conn, err := natsrv.Connect(context.Background(), srv.URL(), natsrv.ConnectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conn.Close)
		s, err := natskv.OpenSessions(context.Background(), conn.JS, natskv.SessionConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return sessionstore.NewNATSBackend(s)
	}
	a, b := open(), open()
	storetest.Run(t, a)
	id := sessionstore.NewID()
	if err := a.Save(context.Background(), id, []byte("shared"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Load(context.Background(), id); err != nil || string(got) != "shared" {
		t.Errorf("the other instance loads %q, %v", got, err)
	}
}

// TestFileBackendOnDisk: one file per session, mode 0600, in the
// directory made on the first save; ids that are not the engine's own
// never reach the file system.
func TestFileBackendOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	b := sessionstore.NewFileBackend(dir)
	ctx := context.Background()
	id := sessionstore.NewID()
	if err := b.Save(ctx, id, []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, id))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("session file: %v %v, want mode 0600", fi, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("session directory: %v %v, want mode 0700", fi, err)
	}
	outside := filepath.Join(filepath.Dir(dir), "victim")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../victim", "", strings.Repeat("a", 42), strings.Repeat("!", 43)} {
		if _, err := b.Load(ctx, bad); !errors.Is(err, sessionstore.ErrNotFound) {
			t.Errorf("Load(%q) = %v, want ErrNotFound", bad, err)
		}
		if err := b.Save(ctx, bad, []byte("x"), time.Hour); err == nil {
			t.Errorf("Save(%q) succeeded", bad)
		}
		if err := b.Delete(ctx, bad); err != nil {
			t.Errorf("Delete(%q) = %v", bad, err)
		}
	}
	if data, err := os.ReadFile(outside); err != nil || string(data) != "keep" {
		t.Errorf("a file outside the directory was touched: %q %v", data, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d entries, want the one session", len(ents))
	}
}

// TestFileBackendSweep: the first save of a process sweeps expired
// session files left by earlier runs, and keeps live ones and other files.
func TestFileBackendSweep(t *testing.T) {
	dir := t.TempDir()
	expired, live := sessionstore.NewID(), sessionstore.NewID()
	write := func(name string, exp time.Time) {
		var head [8]byte
		binary.BigEndian.PutUint64(head[:], uint64(exp.UnixNano()))
		if err := os.WriteFile(filepath.Join(dir, name), append(head[:], 'x'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(expired, time.Now().Add(-time.Minute))
	write(live, time.Now().Add(time.Hour))
	write("README", time.Now().Add(-time.Minute))
	b := sessionstore.NewFileBackend(dir)
	if err := b.Save(context.Background(), sessionstore.NewID(), []byte("new"), time.Hour); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "the sweep to remove the expired file", func() bool {
		_, err := os.Stat(filepath.Join(dir, expired))
		return errors.Is(err, os.ErrNotExist)
	})
	for _, keep := range []string{live, "README"} {
		if _, err := os.Stat(filepath.Join(dir, keep)); err != nil {
			t.Errorf("the sweep removed %s: %v", keep, err)
		}
	}
}

// TestRedisBackendKeys: sessions live under zealgo:session:<id> with the
// ttl as the key's expiry.
func TestRedisBackendKeys(t *testing.T) {
	addr := testutil.StartRedis(t)
	b, err := sessionstore.NewRedisBackend("redis://"+addr+"/0", "test")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Addr() != addr {
		t.Errorf("Addr() = %q, want %q", b.Addr(), addr)
	}
	id := sessionstore.NewID()
	if err := b.Save(context.Background(), id, []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	ttl, err := rc.TTL(context.Background(), "zealgo:session:"+id).Result()
	if err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("key TTL %v %v, want about an hour", ttl, err)
	}
}

// TestRedisBackendErrors: a bad URL or a server that does not answer is an
// error at once, naming the setting, never the password.
func TestRedisBackendErrors(t *testing.T) {
	down := testutil.FreeAddr(t)
	for _, tc := range []struct{ addr, want string }{
		{"redis://user:hunter2@" + down + ":x/0", "invalid port"},
		{"redis://user:hunter2@" + down + "/0", "does not answer"},
	} {
		b, err := sessionstore.NewRedisBackend(tc.addr, "THE_SETTING")
		if err == nil {
			b.Close()
			t.Errorf("%s: no error", tc.addr)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "zealgo: ") || !strings.Contains(msg, tc.want) ||
			!strings.Contains(msg, "THE_SETTING") || strings.Contains(msg, "hunter2") {
			t.Errorf("%s: %q", tc.addr, msg)
		}
	}
}
