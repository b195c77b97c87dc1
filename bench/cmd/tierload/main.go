// Command tierload measures tiered `zealgo serve` during an editing
// session (bench/tier.sh): it saves api/bench/edit.go -saves times while
// -load clients request it and /api/php/get without pause; after each save
// it times the write to the first response with the new version (served
// interpreted), and after -switches of them, spread over the session, it
// also waits for the switch to the native build that includes the save.
// It follows serve's log (-log) for the builds' starts and the switches,
// and samples the process tree of serve's supervisor (-pid) for CPU and
// memory. Any failed request (transport error, status other than 200, a
// body that is not JSON) counts. It prints Markdown tables.
//
//	tierload -url http://127.0.0.1:8080 -root DIR -log serve.log -pid PID -saves 150 -switches 20
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zealgo/zealgo/bench/internal/benchutil"
)

// session is one editing session's settings and what it recorded.
type session struct {
	base, path      string
	saves, switches int
	within, budget  time.Duration
	stopped         string // why the session ended before its last save, if it did
	client          *http.Client
	logs            *logWatch

	saved   []time.Time     // the time of each save
	live    []time.Duration // save -> new body served
	waited  []int           // the saves whose switch was waited for
	switchT []time.Duration // save -> switch, for those
}

func main() {
	base := flag.String("url", "", "base URL of tiered zealgo serve")
	root := flag.String("root", "", "the server's application root")
	logPath := flag.String("log", "", "serve's log file")
	pid := flag.Int("pid", 0, "the PID of serve's supervisor")
	saves := flag.Int("saves", 150, "saves of api/bench/edit.go")
	switches := flag.Int("switches", 20, "saves after which the switch to a new build is awaited")
	load := flag.Int("load", 8, "concurrent clients during the session")
	rate := flag.Int("rate", 0, "requests per second of all the clients together, 0 for no pause")
	within := flag.Duration("within", 5*time.Minute, "the longest wait for one switch")
	budget := flag.Duration("budget", 20*time.Minute, "the session ends after this long, with what it measured (0: no limit)")
	flag.Parse()
	if *base == "" || *root == "" || *logPath == "" || *pid == 0 || *switches > *saves {
		log.Fatal("tierload: -url, -root, -log and -pid are required, and -switches at most -saves")
	}
	logs, err := watchLog(*logPath)
	if err != nil {
		log.Fatal("tierload: ", err)
	}
	s := &session{base: *base, path: filepath.Join(*root, "api", "bench", "edit.go"), saves: *saves, switches: *switches,
		within: *within, budget: *budget, logs: logs,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *load + 2}, Timeout: 10 * time.Second}}
	cpu0 := treeCPU(tree(*pid))
	smp := newSampler(*pid)
	ld := startLoad(s.client, *load, *rate, []string{*base + "/api/bench/edit", *base + "/api/php/get?a=1&b=two"})
	t0 := time.Now()
	s.run()
	elapsed := time.Since(t0)
	total, failed, first := ld.finish()
	cpu1 := treeCPU(tree(*pid))
	serving, sup := smp.finish()
	logs.close()
	s.report(elapsed, total, failed, first, *load)
	reportCosts(s, smp, cpu1-cpu0, serving, sup)
}

// run saves the file s.saves times; after a save whose number crosses a
// multiple of saves/switches it waits for the switch to the build that
// includes it. The session ends early, saying why, when the budget is
// spent, a save is not served within 10 s or a switch does not come.
func (s *session) run() {
	s.write(0)
	if _, ok := s.waitVersion(0, 30*time.Second); !ok {
		log.Fatal("tierload: the server never served the first version")
	}
	t0 := time.Now()
	for v := 1; v <= s.saves && s.stopped == ""; v++ {
		if s.budget > 0 && time.Since(t0) > s.budget {
			s.stopped = fmt.Sprintf("the session's budget of %s was spent before save %d", s.budget, v)
			break
		}
		n := s.logs.switchCount()
		start := s.write(v)
		d, ok := s.waitVersion(v, 10*time.Second)
		if !ok {
			s.stopped = fmt.Sprintf("save %d was not served within 10 s", v)
			break
		}
		s.live = append(s.live, d)
		if v*s.switches/s.saves == (v-1)*s.switches/s.saves {
			continue
		}
		at, ok := s.logs.waitSwitch(n, s.within)
		if !ok {
			s.stopped = fmt.Sprintf("no switch to a build within %s of save %d (or the build failed)", s.within, v)
			break
		}
		s.waited = append(s.waited, v)
		s.switchT = append(s.switchT, at.Sub(start))
		// The new process serves the saved version too (compiled).
		if _, ok := s.waitVersion(v, 10*time.Second); !ok {
			s.stopped = fmt.Sprintf("save %d was not served within 10 s of its switch", v)
		}
	}
}

// write saves version v in place (truncate, then write, as most editors
// do) and returns when.
func (s *session) write(v int) time.Time {
	at := time.Now()
	if err := benchutil.WriteEdit(s.path, v); err != nil {
		log.Fatal("tierload: ", err)
	}
	s.saved = append(s.saved, at)
	return at
}

// waitVersion asks for the edited endpoint until it answers version v.
func (s *session) waitVersion(v int, within time.Duration) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < within {
		resp, err := s.client.Get(s.base + "/api/bench/edit")
		if err != nil {
			continue
		}
		var body struct{ V int }
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err == nil && resp.StatusCode == 200 && body.V == v {
			return time.Since(start), true
		}
	}
	return 0, false
}

// load is the clients that request without pause during the session.
type load struct {
	stop          chan struct{}
	wg            sync.WaitGroup
	total, failed atomic.Int64
	first         atomic.Value
}

// startLoad starts n clients asking for urls in turn, together rate
// requests per second (no pause when rate is 0).
func startLoad(c *http.Client, n, rate int, urls []string) *load {
	l := &load{stop: make(chan struct{})}
	var every time.Duration // between two requests of a client
	if rate > 0 {
		every = time.Duration(n) * time.Second / time.Duration(rate)
	}
	for i := range n {
		l.wg.Add(1)
		go l.client(c, urls, i, every)
	}
	return l
}

func (l *load) client(c *http.Client, urls []string, k int, every time.Duration) {
	defer l.wg.Done()
	var pace <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		pace = t.C
	}
	for i := k; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		if pace != nil {
			select {
			case <-l.stop:
				return
			case <-pace:
			}
		}
		l.total.Add(1)
		if err := get(c, urls[i%len(urls)]); err != nil {
			l.failed.Add(1)
			l.first.CompareAndSwap(nil, err.Error())
		}
	}
}

// get asks for url and checks the answer: 200 and a JSON body.
func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: status %d: %.200s", url, resp.StatusCode, body)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%s: %w: %.200s", url, err, body)
	}
	return nil
}

func (l *load) finish() (total, failed int64, first string) {
	close(l.stop)
	l.wg.Wait()
	if e, ok := l.first.Load().(string); ok {
		first = e
	}
	return l.total.Load(), l.failed.Load(), first
}
