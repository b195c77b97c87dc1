// Command reload measures zealgo's hot reload against a running server:
// it rewrites a handler file -edits times, each time timing from the
// write to the first response that shows the change, while -load clients
// request the edited endpoint and another one without pause. Any failed
// request (transport error, status other than 200, body not JSON) counts.
// It prints a Markdown table: the time from the save's end (the write
// returned: the new file is on disk) and from its start (before the
// truncating open), and how long the save itself took, which on a loaded
// disk is the kernel's and not the server's. With -trace each edit's
// figures go to stderr too.
//
//	reload -url http://127.0.0.1:8080 -root DIR -edits 50 -load 8
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zealgo/zealgo/bench/internal/benchutil"
)

func main() {
	base := flag.String("url", "", "base URL of the zealgo server")
	root := flag.String("root", "", "the server's application root")
	edits := flag.Int("edits", 50, "number of edits")
	load := flag.Int("load", 8, "concurrent clients during the edits")
	trace := flag.Bool("trace", false, "print each edit's times to stderr")
	flag.Parse()
	if *base == "" || *root == "" {
		log.Fatal("reload: -url and -root are required")
	}
	path := filepath.Join(*root, "api", "bench", "edit.go")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	write := func(v int) {
		// Rewrite in place, as most editors do: truncate, then write.
		if err := benchutil.WriteEdit(path, v); err != nil {
			log.Fatal(err)
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *load + 2}, Timeout: 10 * time.Second}
	editURL := *base + "/api/bench/edit"
	version := func() (int, error) {
		resp, err := client.Get(editURL)
		if err != nil {
			return -1, err
		}
		defer resp.Body.Close()
		var body struct{ V int }
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
			return -1, fmt.Errorf("status %d, %v", resp.StatusCode, err)
		}
		return body.V, nil
	}
	write(0)
	deadline := time.Now().Add(10 * time.Second)
	for v, err := version(); v != 0; v, err = version() {
		if time.Now().After(deadline) {
			log.Fatalf("reload: the server never served the first version: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	var total, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := 0; c < *load; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			urls := []string{editURL, *base + "/api/php/get?a=1&b=two"}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				total.Add(1)
				resp, err := client.Get(urls[(c+i)%2])
				if err == nil {
					var body []byte
					body, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					var v any
					if err == nil {
						err = json.Unmarshal(body, &v)
					}
					if err == nil && resp.StatusCode != 200 {
						err = fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
					}
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}(c)
	}

	var fromStart, fromSaved, saves []time.Duration
	t0 := time.Now()
	for v := 1; v <= *edits; v++ {
		time.Sleep(20 * time.Millisecond) // let the load run between edits
		start := time.Now()
		write(v)
		saved := time.Now()
		for {
			got, _ := version()
			if got == v {
				break
			}
			if time.Since(start) > 10*time.Second {
				log.Fatalf("reload: edit %d not served after 10s", v)
			}
		}
		end := time.Now()
		fromStart, fromSaved, saves = append(fromStart, end.Sub(start)), append(fromSaved, end.Sub(saved)), append(saves, saved.Sub(start))
		if *trace {
			fmt.Fprintf(os.Stderr, "edit %d at %d µs: save %v, served %v after it\n", v, start.UnixMicro(), saved.Sub(start), end.Sub(saved))
		}
	}
	elapsed := time.Since(t0)
	close(stop)
	wg.Wait()
	pct := func(ds []time.Duration) string {
		return fmt.Sprintf("%s | %s | %s", benchutil.Ms(benchutil.Percentile(ds, 50)), benchutil.Ms(benchutil.Percentile(ds, 99)),
			benchutil.Ms(benchutil.Percentile(ds, 100)))
	}
	fmt.Println("| edits | from the save's end to the first changed response p50 | p99 | max | from the save's start p50 | p99 | max " +
		"| the save (truncate + write) p50 | p99 | max | requests under load during the edits | failed requests |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Printf("| %d | %s | %s | %s | %d (%.0f/s, %d clients) | %d |\n", len(fromSaved), pct(fromSaved), pct(fromStart), pct(saves),
		total.Load(), float64(total.Load())/elapsed.Seconds(), *load, failed.Load())
	if e := firstErr.Load(); e != nil {
		fmt.Printf("\nFirst failure: %s\n", e)
	}
}
