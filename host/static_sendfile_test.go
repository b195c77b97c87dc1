package host_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// readFromCounter is the response writer the test server gives the
// application: it stands for net/http's own, whose ReadFrom sends a file
// with sendfile(2), and counts the bytes that reach it through ReadFrom.
type readFromCounter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w readFromCounter) ReadFrom(src io.Reader) (int64, error) {
	n, err := w.ResponseWriter.(io.ReaderFrom).ReadFrom(src)
	w.n.Add(n)
	return n, err
}

// TestStaticReadFrom: a static file's bytes reach the connection's
// ReadFrom (sendfile stays possible: no wrapper between http.ServeContent
// and the connection hides it), for GET and for a range; the response is
// whole, with the request id and the file's headers.
func TestStaticReadFrom(t *testing.T) {
	data := strings.Repeat("body{color:#123456}\n", 400) // 8000 bytes
	root := testutil.WriteTree(t, map[string]string{"public/css/site.css": data})
	app := host.New(host.WithRoot(root), host.WithDataDir(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError))
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	served := make(chan int64, 2) // the bytes through ReadFrom, once the application has answered
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n atomic.Int64
		h.ServeHTTP(readFromCounter{w, &n}, r)
		served <- n.Load()
	}))
	defer srv.Close()
	through := func() int64 {
		select {
		case n := <-served:
			return n
		case <-time.After(5 * time.Second):
			t.Fatal("the handler did not return")
			return 0
		}
	}

	resp, body := do(t, nil, "GET", srv.URL+"/css/site.css", nil)
	if resp.StatusCode != 200 || body != data || resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("Etag") == "" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("GET: %d %v (%d bytes)", resp.StatusCode, resp.Header, len(body))
	}
	if got := through(); got != int64(len(data)) {
		t.Errorf("%d bytes went through ReadFrom, want all %d", got, len(data))
	}
	resp, body = do(t, nil, "GET", srv.URL+"/css/site.css", nil, "Range", "bytes=100-199")
	if resp.StatusCode != http.StatusPartialContent || body != data[100:200] {
		t.Fatalf("range: %d %q", resp.StatusCode, body)
	}
	if got := through(); got != 100 {
		t.Errorf("range: %d bytes went through ReadFrom, want 100", got)
	}
}
