// Command rss measures a server's resident memory under many connections:
// it starts the server (a binary and its arguments, {addr} standing for a
// free loopback address), keeps -conns clients on connections of their
// own asking for -paths round robin for -duration, samples the process's
// VmRSS every -every, and prints the RSS before the load, its peak, at
// the end, and the requests served. With -limit it exits 1 when the peak
// passes it (issue 30: under 150 MB at 200 connections for 60 s).
//
//	go build -o /tmp/sample ./sample
//	go run ./bench/cmd/rss -bin /tmp/sample -- serve --root . --addr {addr} --data /tmp/d --supervise=false
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zealgo/zealgo/bench/internal/benchutil"
)

func main() {
	bin := flag.String("bin", "", "the server binary")
	conns := flag.Int("conns", 200, "clients, each on a connection of its own")
	duration := flag.Duration("duration", 60*time.Second, "how long the load lasts")
	every := flag.Duration("every", 500*time.Millisecond, "RSS sampling interval")
	paths := flag.String("paths", "/api/learn/notes,/learn/,/api/users", "comma-separated paths asked for round robin")
	probe := flag.String("probe", "/api/users", "the path that tells the server is up")
	limit := flag.Int64("limit", 0, "fail (exit 1) when the peak RSS passes this many MiB; 0: never")
	label := flag.String("label", "", "a name for the result line")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "rss: -bin is required")
		os.Exit(2)
	}
	srv, err := benchutil.Start(*bin, flag.Args(), nil, *probe, 60*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer srv.Stop()
	r, err := measure(srv, strings.Split(*paths, ","), *conns, *duration, *every)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d connections for %v: RSS before %s, peak %s, at the end %s; %d answers (%.0f/s), %d 5xx, %d errors\n",
		*label, *conns, *duration, benchutil.MiB(r.base), benchutil.MiB(r.peak), benchutil.MiB(r.last),
		r.answers, float64(r.answers)/duration.Seconds(), r.fivexx, r.errs)
	if *limit > 0 && r.peak > *limit<<20 {
		fmt.Printf("%s: peak RSS %s passes the limit %d MiB\n", *label, benchutil.MiB(r.peak), *limit)
		srv.Stop()
		os.Exit(1)
	}
}

// result is one measurement.
type result struct {
	base, peak, last      int64
	answers, fivexx, errs int64
}

// measure runs the load against srv and samples its RSS meanwhile.
func measure(srv *benchutil.Server, paths []string, conns int, d, every time.Duration) (result, error) {
	var r result
	base, err := srv.RSS()
	if err != nil {
		return r, err
	}
	r.base, r.peak = base, base
	var answers, fivexx, errs atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1},
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			defer c.CloseIdleConnections()
			for n := i; time.Now().Before(deadline); n++ {
				resp, err := c.Get(srv.URL(paths[n%len(paths)]))
				if err != nil {
					errs.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answers.Add(1)
				if resp.StatusCode >= 500 {
					fivexx.Add(1)
				}
			}
		})
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-tick.C:
			if rss, err := srv.RSS(); err == nil {
				r.peak, r.last = max(r.peak, rss), rss
			}
		case <-done:
			if rss, err := srv.RSS(); err == nil {
				r.peak, r.last = max(r.peak, rss), rss
			}
			r.answers, r.fivexx, r.errs = answers.Load(), fivexx.Load(), errs.Load()
			return r, nil
		}
	}
}
