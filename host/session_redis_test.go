package host_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// startRedis runs redis-server on a free loopback port (testutil.StartRedis).
func startRedis(t *testing.T) string { return testutil.StartRedis(t) }

// TestSessionRedis runs two instances sharing one Redis, as behind a load
// balancer: a session made on one is seen, rotated and destroyed on the
// other.
func TestSessionRedis(t *testing.T) {
	addr := startRedis(t)
	secret := host.WithSessionSecret(strings.Repeat("s", 40))
	urlA, _, cA := sessionApp(t, t.TempDir(), false, host.WithRedisSessions(addr), secret)
	urlB, _, cB := sessionApp(t, t.TempDir(), false, host.WithRedisSessions("redis://"+addr+"/0"), secret)
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	ctx := context.Background()

	resp, body := sget(t, cA, urlA+"/api/s/set?name=dee", nil)
	ck := sessionCookie(resp)
	id := between(body, `"id":"`, `"`)
	if ck == nil || id == "" {
		t.Fatalf("set on A: %v %s", resp.Header, body)
	}
	ttl, err := rc.TTL(ctx, "zealgo:session:"+id).Result()
	if err != nil || ttl <= 0 || ttl > 14*24*time.Hour {
		t.Fatalf("redis key TTL %v %v, want the session lifetime", ttl, err)
	}
	if _, body = sget(t, cB, urlB+"/api/s/get", ck); !strings.Contains(body, `"uid":42`) || !strings.Contains(body, `"name":"dee"`) {
		t.Fatalf("get on B: %s", body)
	}

	resp, body = sget(t, cB, urlB+"/api/s/rotate", ck)
	rotated := sessionCookie(resp)
	newID := between(body, `"id":"`, `"`)
	if rotated == nil || newID == id {
		t.Fatalf("rotate on B: %v %s", rotated, body)
	}
	if n, _ := rc.Exists(ctx, "zealgo:session:"+id).Result(); n != 0 {
		t.Error("the old id is still in Redis after rotation")
	}
	if _, body = sget(t, cA, urlA+"/api/s/get", ck); !strings.Contains(body, `"ok":false`) {
		t.Errorf("the old id works on A: %s", body)
	}
	if _, body = sget(t, cA, urlA+"/api/s/get", rotated); !strings.Contains(body, `"uid":42`) {
		t.Errorf("the new id fails on A: %s", body)
	}

	sget(t, cA, urlA+"/api/s/destroy", rotated)
	if n, _ := rc.Exists(ctx, "zealgo:session:"+newID).Result(); n != 0 {
		t.Error("a destroyed session is still in Redis")
	}
	if _, body = sget(t, cB, urlB+"/api/s/get", rotated); !strings.Contains(body, `"ok":false`) {
		t.Errorf("a destroyed session works on B: %s", body)
	}
}

func TestSessionRedisUnreachable(t *testing.T) {
	addr := testutil.FreeAddr(t)
	app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError), host.WithRedisSessions(addr))
	_, err := app.Handler()
	app.Close()
	if err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("start-up with no Redis: %v", err)
	}
}
