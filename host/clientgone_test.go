package host_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// TestClientGoneIsNoError: a handler that returns its request context's
// error after the client closed the request (as a query canceled with it
// does) is no server failure: the log has an info record, not an error,
// and the metrics count no 5xx.
func TestClientGoneIsNoError(t *testing.T) {
	logs := &testutil.Buffer{}
	root := testutil.WriteTree(t, map[string]string{
		"api/wait.go": `//go:build ignore

package main

import (
	"os"

	"github.com/zealgo/zealgo/host"
)

var wait = func(api *host.API) (any, error) {
	if err := os.WriteFile(api.String("mark"), nil, 0o644); err != nil {
		return nil, err
	}
	<-api.Context().Done()
	return nil, api.Context().Err()
}
`,
	})
	app := host.New(host.WithRoot(root), host.WithDataDir(t.TempDir()), host.WithLogOutput(logs, slog.LevelInfo))
	app.Symbols(symbols.Symbols)
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	mark := filepath.Join(t.TempDir(), "started")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/wait?mark="+url.QueryEscape(mark), nil)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	testutil.WaitFor(t, 10*time.Second, "the handler to start", func() bool {
		_, err := os.Stat(mark)
		return err == nil
	})
	cancel()
	<-done
	testutil.WaitFor(t, 10*time.Second, "the canceled request in the log", func() bool {
		return strings.Contains(logs.String(), "request canceled: the client went away")
	})
	if s := logs.String(); strings.Contains(s, "level=ERROR") {
		t.Errorf("a request the client closed was logged as an error:\n%s", s)
	}
}
