package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// client makes every request on a new connection, as a crash would break
// a kept-alive one anyway, and refused connections show as such.
var client = &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// counts are the outcomes of one kind of background request.
type counts struct{ ok, failed, refused atomic.Int64 }

func (c *counts) snapshot() [3]int64 { return [3]int64{c.ok.Load(), c.failed.Load(), c.refused.Load()} }

// traffic runs background clients during the whole run: two that request
// /api/ping, one that writes rows, one that dispatches tasks. The rows and
// tasks acknowledged are kept, to look for them at the end.
type traffic struct {
	base                string
	ping, rows, tasks   counts
	mu                  sync.Mutex
	rowsAcked, tasksAck []int
	stop                chan struct{}
	wg                  sync.WaitGroup
}

func startTraffic(base string) *traffic {
	tr := &traffic{base: base, stop: make(chan struct{})}
	for range 2 {
		tr.loop(func(int) { tr.count(&tr.ping, get(base+"/api/ping")) })
	}
	tr.loop(func(n int) {
		err := post(base+"/api/row", n)
		tr.count(&tr.rows, err)
		if err == nil {
			tr.mu.Lock()
			tr.rowsAcked = append(tr.rowsAcked, n)
			tr.mu.Unlock()
		}
	})
	tr.loop(func(n int) {
		err := post(base+"/api/task", n)
		tr.count(&tr.tasks, err)
		if err == nil {
			tr.mu.Lock()
			tr.tasksAck = append(tr.tasksAck, n)
			tr.mu.Unlock()
		}
	})
	return tr
}

// loop calls f with 1, 2, 3, ... every 20ms until halt.
func (tr *traffic) loop(f func(n int)) {
	tr.wg.Add(1)
	go func() {
		defer tr.wg.Done()
		for n := 1; ; n++ {
			select {
			case <-tr.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			f(n)
		}
	}()
}

func (tr *traffic) halt() { close(tr.stop); tr.wg.Wait() }

func (tr *traffic) count(c *counts, err error) {
	switch {
	case err == nil:
		c.ok.Add(1)
	case errors.Is(err, syscall.ECONNREFUSED):
		c.refused.Add(1)
	default:
		c.failed.Add(1)
	}
}

// window is what the background clients saw between two snapshots.
type window struct{ ping, rows, tasks [3]int64 }

func (tr *traffic) snapshot() window {
	return window{tr.ping.snapshot(), tr.rows.snapshot(), tr.tasks.snapshot()}
}

func (w window) since(before window) window {
	sub := func(a, b [3]int64) [3]int64 { return [3]int64{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
	return window{sub(w.ping, before.ping), sub(w.rows, before.rows), sub(w.tasks, before.tasks)}
}

// failed is how many background requests failed or were refused.
func (w window) failed() int64 {
	return w.ping[1] + w.ping[2] + w.rows[1] + w.rows[2] + w.tasks[1] + w.tasks[2]
}

func (w window) total() int64 { return w.ping[0] + w.rows[0] + w.tasks[0] + w.failed() }

func (w window) refused() int64 { return w.ping[2] + w.rows[2] + w.tasks[2] }

// get requests url; a status other than 200 is an error.
func get(url string) error { return ok200(client.Get(url)) }

// post sends {"n":n} to url; a status other than 200 is an error.
func post(url string, n int) error {
	return ok200(client.Post(url, "application/json", strings.NewReader(fmt.Sprintf(`{"n":%d}`, n))))
}

// ok200 drains and closes the answer of a request, and returns its error
// or, for a status other than 200, one naming the status.
func ok200(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// servingPID returns the pid that answers /api/ping, or 0.
func servingPID(base string) int {
	resp, err := client.Get(base + "/api/ping")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var v struct{ PID int }
	if json.NewDecoder(resp.Body).Decode(&v) != nil {
		return 0
	}
	return v.PID
}
