package host_test

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// TestMetricsManyStatuses: one handler file answering with many statuses
// and two methods, from several clients at once, more series than a file
// keeps at hand: each request is counted once, under its own method and
// status, and timed under its method.
func TestMetricsManyStatuses(t *testing.T) {
	ta := newTestApp(t, map[string]string{
		"api/code.go": "//go:build ignore\n\npackage main\n\nimport \"github.com/zealgo/zealgo/host\"\n\n" +
			"var code = func(api *host.API) int { n, _ := api.Int(\"s\"); return n }\n",
	}, host.WithMetrics("127.0.0.1:0"))
	const statuses, each, clients = 80, 3, 4 // 2 methods x 80 statuses: more than a file keeps
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < statuses*each; i += clients {
				s := 200 + i%statuses
				for _, m := range []string{"GET", "POST"} {
					req, _ := http.NewRequest(m, ta.srv.URL+"/api/code?s="+strconv.Itoa(s), nil)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						errs <- err
						return
					}
					resp.Body.Close()
					if resp.StatusCode != s {
						errs <- fmt.Errorf("%s ?s=%d: status %d", m, s, resp.StatusCode)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fams := scrape(t, ta.app)
	for s := 200; s < 200+statuses; s++ {
		for _, m := range []string{"GET", "POST"} {
			if n := metricValue(fams, "zealgo_http_requests_total", "code="+strconv.Itoa(s), "handler=api/code.go", "method="+m); n != each {
				t.Errorf("%s %d counted %v times, want %d", m, s, n, each)
			}
		}
	}
	for _, m := range []string{"GET", "POST"} {
		if n := metricValue(fams, "zealgo_http_request_duration_seconds", "handler=api/code.go", "method="+m); n != statuses*each {
			t.Errorf("%s timed %v times, want %d", m, n, statuses*each)
		}
	}
	if n := metricValue(fams, "zealgo_http_requests_in_flight"); n != 0 {
		t.Errorf("in flight after the requests: %v", n)
	}
}
