package host_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// runServe runs the serve command of an App serving sessionFiles from
// root ("" for the working directory) with args after "serve --addr ...",
// as the stock binary would, until the test ends; it returns the URL.
func runServe(t *testing.T, root string, args ...string) string {
	t.Helper()
	var opts []host.Option
	if root != "" {
		opts = append(opts, host.WithRoot(root))
	}
	app := host.New(append(opts, host.WithLogOutput(io.Discard, slog.LevelError))...)
	app.Symbols(symbols.Symbols)
	addr := testutil.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &testutil.Buffer{}
	exited := make(chan struct{})
	code := 0
	go func() {
		defer close(exited)
		code = app.Run(ctx, append([]string{"serve", "--addr", addr}, args...), io.Discard, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	})
	testutil.WaitFor(t, 10*time.Second, "serve to answer", func() bool {
		select {
		case <-exited:
			t.Fatalf("serve %v exited with %d: %s", args, code, stderr.String())
		default:
		}
		resp, err := http.Get("http://" + addr + "/api/s/none")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
	return "http://" + addr
}

// TestSessionRedisFromEnvironmentAndFlag: the stock binaries choose the
// Redis store by configuration. Two Apps set up by ZEALGO_SESSION_REDIS
// alone share a session; a third, started by the serve command with
// --session-redis, sees it too, the flag winning over the environment.
func TestSessionRedisFromEnvironmentAndFlag(t *testing.T) {
	addr := startRedis(t)
	url := "redis://" + addr + "/0"
	t.Setenv(host.SessionSecretEnv, strings.Repeat("v", 40))
	t.Setenv(host.SessionRedisEnv, url)
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()

	// Each App has a data directory of its own: only Redis is shared.
	urlA, _, cA := sessionApp(t, t.TempDir(), false)
	urlB, _, cB := sessionApp(t, t.TempDir(), false)
	resp, body := sget(t, cA, urlA+"/api/s/set?name=eve", nil)
	ck := sessionCookie(resp)
	id := between(body, `"id":"`, `"`)
	if ck == nil || id == "" {
		t.Fatalf("set on A: %v %s", resp.Header, body)
	}
	if n, err := rc.Exists(context.Background(), "zealgo:session:"+id).Result(); err != nil || n != 1 {
		t.Fatalf("the session is not in Redis: %d %v", n, err)
	}
	if _, body = sget(t, cB, urlB+"/api/s/get", ck); !strings.Contains(body, `"uid":42`) || !strings.Contains(body, `"name":"eve"`) {
		t.Fatalf("get on B: %s", body)
	}

	// The flag wins over an environment that points nowhere.
	t.Setenv(host.SessionRedisEnv, "redis://"+testutil.FreeAddr(t)+"/0")
	urlC := runServe(t, testutil.WriteTree(t, sessionFiles), "--data", t.TempDir(), "--session-redis", url)
	if _, body = sget(t, nil, urlC+"/api/s/get", ck); !strings.Contains(body, `"uid":42`) || !strings.Contains(body, `"name":"eve"`) {
		t.Fatalf("get on serve --session-redis: %s", body)
	}
	if _, body = sget(t, nil, urlC+"/api/s/del?key=name", ck); !strings.Contains(body, `"ok":true`) {
		t.Fatalf("delete on serve --session-redis: %s", body)
	}
	if _, body = sget(t, cA, urlA+"/api/s/get", ck); !strings.Contains(body, `"uid":42`) || !strings.Contains(body, `"name":""`) {
		t.Fatalf("get on A after a change on C: %s", body)
	}
}

// TestSessionRedisEnvironmentErrors: a bad or unreachable
// ZEALGO_SESSION_REDIS stops start-up with an error naming the variable,
// without the password of the URL; the serve flag is reported likewise.
func TestSessionRedisEnvironmentErrors(t *testing.T) {
	t.Setenv(host.SessionSecretEnv, "")
	dead := testutil.FreeAddr(t)
	for _, tc := range []struct{ name, url, want string }{
		{"bad database", "redis://:hunter2@" + dead + "/notanumber", "invalid database number"},
		{"bad port", "redis://:hunter2@127.0.0.1:port/0", "invalid port"},
		{"unreachable", "redis://:hunter2@" + dead + "/0", "does not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(host.SessionRedisEnv, tc.url)
			app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError))
			_, err := app.Handler()
			app.Close()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), host.SessionRedisEnv) ||
				!strings.HasPrefix(err.Error(), "zealgo: ") || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("start-up error %v, want one naming %s with %q and no password", err, host.SessionRedisEnv, tc.want)
			}
		})
	}
	t.Run("flag", func(t *testing.T) {
		t.Setenv(host.SessionRedisEnv, "")
		app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError))
		stderr := &testutil.Buffer{}
		code := app.Run(context.Background(), []string{"serve", "--addr", testutil.FreeAddr(t),
			"--data", t.TempDir(), "--session-redis", "redis://:hunter2@127.0.0.1:port/0"}, io.Discard, stderr)
		if code != 1 || !strings.Contains(stderr.String(), "invalid port") || !strings.Contains(stderr.String(), "--session-redis") ||
			strings.Contains(stderr.String(), "hunter2") {
			t.Fatalf("serve with a bad --session-redis: exit %d, %s", code, stderr.String())
		}
	})
	t.Run("flag with a backend of the application's", func(t *testing.T) {
		app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError),
			host.WithSessionBackend(nopBackend{}))
		stderr := &testutil.Buffer{}
		code := app.Run(context.Background(), []string{"serve", "--addr", testutil.FreeAddr(t),
			"--session-redis", "redis://127.0.0.1:6379/0"}, io.Discard, stderr)
		if code != 2 || !strings.Contains(stderr.String(), "Config.Session.Backend") {
			t.Fatalf("serve --session-redis over Config.Session.Backend: exit %d, %s", code, stderr.String())
		}
	})
}

// nopBackend is a SessionBackend that holds nothing.
type nopBackend struct{}

func (nopBackend) Load(context.Context, string) ([]byte, error) { return nil, host.ErrSessionNotFound }
func (nopBackend) Save(context.Context, string, []byte, time.Duration) error {
	return nil
}
func (nopBackend) Delete(context.Context, string) error { return nil }

// TestSessionDataDirDefault: --data defaults to <root>/data, which is
// ./data with the default root, and a relative --data is taken from the
// working directory; the help text says so. Sessions, with the generated
// secret, land where it says.
func TestSessionDataDirDefault(t *testing.T) {
	t.Setenv(host.SessionSecretEnv, "")
	t.Setenv(host.SessionRedisEnv, "")
	stdout := &testutil.Buffer{}
	if code := host.New().Run(context.Background(), []string{"serve", "-h"}, stdout, io.Discard); code != 0 {
		t.Errorf("serve -h: exit %d", code)
	}
	help := strings.Join(strings.Fields(stdout.String()), " ")
	for _, want := range []string{"-data DIR", "a relative DIR is taken from the working directory",
		"(default <root>/data, i.e. ./data with the default root)", "-session-redis URL", "(default $" + host.SessionRedisEnv} {
		if !strings.Contains(help, want) {
			t.Errorf("serve -h lacks %q:\n%s", want, stdout.String())
		}
	}

	cases := []struct {
		name string
		args []string
		// dataIn says where the data directory must be: "root" or "wd".
		dataIn, data string
	}{
		{"default root", nil, "root", "data"},
		{"--root", []string{"--root", "ROOT"}, "root", "data"},
		{"--root and a relative --data", []string{"--root", "ROOT", "--data", "mine"}, "wd", "mine"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := testutil.WriteTree(t, sessionFiles)
			// Without --root the root is the default ".": run there.
			wd := root
			if len(tc.args) > 0 {
				wd = t.TempDir()
			}
			t.Chdir(wd)
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "ROOT", root)
			}
			u := runServe(t, "", args...)
			if resp, body := sget(t, nil, u+"/api/s/set?name=x", nil); sessionCookie(resp) == nil {
				t.Fatalf("set: no cookie: %s", body)
			}
			want := filepath.Join(root, tc.data)
			if tc.dataIn == "wd" {
				want = filepath.Join(wd, tc.data)
				if _, err := os.Stat(filepath.Join(root, tc.data)); err == nil {
					t.Errorf("a relative --data was taken from the root")
				}
			}
			if _, err := os.Stat(filepath.Join(want, "session.secret")); err != nil {
				t.Errorf("no session secret in %s: %v", want, err)
			}
			ents, err := os.ReadDir(filepath.Join(want, "sessions"))
			if err != nil || len(ents) != 1 {
				t.Errorf("sessions in %s: %d files, %v", want, len(ents), err)
			}
			if tc.dataIn == "root" && wd != root {
				if _, err := os.Stat(filepath.Join(wd, "data")); err == nil {
					t.Errorf("a data directory was made in the working directory, not under --root")
				}
			}
		})
	}
}
