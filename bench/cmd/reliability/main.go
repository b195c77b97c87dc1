//go:build linux

// Command reliability tries to take a `zealgo serve` down and measures
// what each attempt costs. It writes an application of crash vectors to a
// temporary root, serves it on a free loopback port under the supervisor
// (--max-execution-time 2s, --memory-limit 1G, one task worker) while
// background clients request a probe, write rows and dispatch tasks, then
// fires each vector in turn: for each it reports the answer, whether the
// serving process survived, crashed or was replaced, how long until a
// process served again, and the background requests that failed or were
// refused meanwhile. Then it sends raw malformed requests, stops the
// server with SIGTERM, and counts acknowledged rows and tasks that are
// missing, and processes left behind. It prints Markdown.
//
//	reliability -bin ./zealgo
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zealgo/zealgo/bench/internal/benchutil"
)

const limit = 2 * time.Second // --max-execution-time of the server

func main() {
	bin := flag.String("bin", "./zealgo", "the zealgo binary")
	flag.Parse()
	dir, err := os.MkdirTemp("", "zealgo-reliability")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "app")
	for name, src := range appFiles {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "data"), 0o755); err != nil { // rows.txt, tasks.txt
		log.Fatal(err)
	}
	d, err := start(*bin, root, filepath.Join(dir, "server.log"))
	if err != nil {
		log.Fatal(err)
	}
	defer d.killAll()
	d.run()
}

// driver holds the server under test.
type driver struct {
	cmd     *exec.Cmd
	base    string
	root    string
	logPath string
	seen    map[int]bool // every process seen below the supervisor
	tr      *traffic
}

func start(bin, root, logPath string) (*driver, error) {
	addr, err := benchutil.FreeAddr()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--root", root, "--addr", addr, "--task-workers", "1",
		"--max-execution-time", limit.String(), "--memory-limit", "1G")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &driver{cmd: cmd, base: "http://" + addr, root: root, logPath: logPath, seen: map[int]bool{}}
	for deadline := time.Now().Add(30 * time.Second); servingPID(d.base) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			d.killAll()
			return nil, fmt.Errorf("the server did not answer:\n%s", d.log())
		}
	}
	return d, nil
}

func (d *driver) run() {
	fmt.Printf("Server: `zealgo serve --task-workers 1 --max-execution-time %s --memory-limit 1G` on a loopback port. "+
		"Background clients during the whole run, each on a new connection every 20 ms: two request `/api/ping`, "+
		"one writes a row (appended and fsynced to a file before the answer), one dispatches a task (the worker appends to a file).\n\n", limit)
	d.tr = startTraffic(d.base)
	fmt.Println("| vector | answer | serving process | served again after | background requests failed / refused (of) |")
	fmt.Println("|---|---|---|---|---|")
	var crashes, replaced int
	var failed, refused, total int64
	var recoveries []time.Duration
	for _, v := range vectors {
		r := d.fire(v)
		fmt.Printf("| %s | %s | %s | %s | %d / %d (%d) |\n", v.name, r.answer, r.fate, r.again, r.w.failed(), r.w.refused(), r.w.total())
		failed, refused, total = failed+r.w.failed(), refused+r.w.refused(), total+r.w.total()
		switch {
		case strings.HasPrefix(r.fate, "crashed"):
			crashes++
			recoveries = append(recoveries, r.recovery)
		case strings.HasPrefix(r.fate, "replaced"):
			replaced++
		}
	}
	mal := d.malformed()
	d.tr.halt()
	settled := d.settleTasks()
	left, exit := d.stop()
	rowsLost, tasksLost := d.lost()
	sort.Slice(recoveries, func(i, j int) bool { return recoveries[i] < recoveries[j] })

	fmt.Printf("\n%s\n\n## Summary\n\n", mal)
	fmt.Printf("- %d vectors: %d crashed the serving process, %d had it replaced (a handler past the limit), %d ended nothing.\n",
		len(vectors), crashes, replaced, len(vectors)-crashes-replaced)
	if len(recoveries) > 0 {
		fmt.Printf("- Time from a crash to the first answer of the new process: %s to %s (median %s).\n",
			benchutil.Ms(recoveries[0]), benchutil.Ms(recoveries[len(recoveries)-1]), benchutil.Ms(benchutil.Percentile(recoveries, 50)))
	}
	fmt.Printf("- Background requests while the vectors ran: %d, of which %d failed (in flight in a process that died) and %d were refused.\n",
		total, failed, refused)
	fmt.Printf("- Rows: %d acknowledged, %d of them missing from the file at the end.\n", len(d.tr.rowsAcked), rowsLost)
	fmt.Printf("- Tasks: %d dispatches acknowledged, %d never ran%s.\n", len(d.tr.tasksAck), tasksLost, settled)
	fmt.Printf("- SIGTERM to the supervisor: %s; processes left behind: %d.\n", exit, left)
}

// result is what one vector did.
type result struct {
	answer, fate, again string
	recovery            time.Duration
	w                   window
}

func (d *driver) fire(v vector) result {
	before := servingPID(d.base)
	d.descendants()
	snap := d.tr.snapshot()
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	var r result
	if v.kill {
		r.answer = "—"
		_ = syscall.Kill(before, syscall.SIGKILL)
	} else {
		r.answer = answer(d.base + v.path)
	}
	answered := time.Now()
	if !v.kill && time.Since(t0) > time.Second {
		r.answer += fmt.Sprintf(" after %.1f s", time.Since(t0).Seconds())
	}
	// Which process serves now: a new one (the old died or was replaced),
	// or the same one, which has to keep answering for 1.5 s.
	after := before
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline) && (after == before || after == 0); time.Sleep(5 * time.Millisecond) {
		after = servingPID(d.base)
	}
	r.recovery = time.Since(answered)
	for deadline := time.Now().Add(15 * time.Second); after != before && alive(before) && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
	}
	gone := time.Since(t0)
	log := d.log()
	switch {
	case after == before:
		r.fate, r.again = "kept", "—"
	case strings.Contains(log, fmt.Sprintf(`msg="supervisor: server process died" pid=%d `, before)):
		r.fate = "crashed: " + d.cause(before)
		r.again = benchutil.Ms(r.recovery)
	default:
		r.fate = fmt.Sprintf("replaced: a new process took over, the old one exited %.2f s after the request began", gone.Seconds())
		r.again = "— (never stopped)"
	}
	time.Sleep(300 * time.Millisecond)
	r.w = d.tr.snapshot().since(snap)
	return r
}

// answer requests url and describes the response or the error.
func answer(url string) string {
	resp, err := client.Get(url)
	if err != nil {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "EOF"):
			return "connection closed (EOF)"
		case strings.Contains(msg, "reset"):
			return "connection reset"
		}
		return msg
	}
	resp.Body.Close()
	return strconv.Itoa(resp.StatusCode)
}

var fatalLine = regexp.MustCompile(`(?m)^(fatal error: .*|runtime: goroutine stack exceeds .*)$`)

// cause names why pid died: its exit status and the runtime's fatal error
// in the log.
func (d *driver) cause(pid int) string {
	log := d.log()
	m := regexp.MustCompile(fmt.Sprintf(`server process died" pid=%d status="([^"]*)"`, pid)).FindStringSubmatch(log)
	status := "?"
	if m != nil {
		status = m[1]
	}
	if f := fatalLine.FindAllString(log, -1); len(f) > 0 && status != "signal: killed" {
		return status + " (`" + f[len(f)-1] + "`)"
	}
	return status
}

func (d *driver) log() string {
	b, _ := os.ReadFile(d.logPath)
	return string(b)
}

// malformed sends the raw requests and sums up the answers.
func (d *driver) malformed() string {
	before := servingPID(d.base)
	statuses := map[string]int{}
	leaks := 0
	addr := strings.TrimPrefix(d.base, "http://")
	for _, req := range malformed {
		status, body := raw(addr, req)
		statuses[status]++
		if strings.Contains(body, "package main") || strings.Contains(body, "go:build") || strings.Contains(body, "root:") {
			leaks++
		}
	}
	var parts []string
	for s, n := range statuses {
		parts = append(parts, fmt.Sprintf("%s × %d", s, n))
	}
	sort.Strings(parts)
	fate := "kept"
	if after := servingPID(d.base); after != before {
		fate = fmt.Sprintf("changed from %d to %d", before, after)
	}
	return fmt.Sprintf("Malformed paths and HTTP: %d raw requests (`..` and encoded traversal, `.go` and NUL in paths, `.git`, "+
		"HTTP/9.9, an unknown method, a 2 MiB header, a 100 KiB path, bad chunking, negative and duplicate Content-Length, "+
		"truncated and 100,000-deep JSON, a broken multipart body, binary garbage): answers %s; source or system files sent: %d; serving process %s.",
		len(malformed), strings.Join(parts, ", "), leaks, fate)
}

// raw sends req on a new connection and returns the status code (or what
// happened) and up to 1 MiB of the body.
func raw(addr, req string) (string, string) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "dial error", ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = c.Write([]byte(req)) }()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "closed without answer", ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return strconv.Itoa(resp.StatusCode), string(body)
}

// settleTasks waits until the task file stops growing.
func (d *driver) settleTasks() string {
	prev := -1
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		n := len(readNumbers(filepath.Join(d.root, "data", "tasks.txt")))
		if n == prev {
			return ""
		}
		prev = n
	}
	return " (the task file was still growing after 20 s)"
}

// stop sends SIGTERM to the supervisor and reports how it ended and how
// many processes it left.
func (d *driver) stop() (left int, exit string) {
	d.descendants()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		exit = "exit status 0"
		if err != nil {
			exit = err.Error()
		}
	case <-time.After(30 * time.Second):
		exit = "still running after 30 s"
	}
	for p := range d.seen {
		if alive(p) {
			left++
		}
	}
	return left, exit
}

// lost counts acknowledged rows and tasks missing from their files.
func (d *driver) lost() (rows, tasks int) {
	missing := func(acked []int, file string) int {
		found := map[int]bool{}
		for _, n := range readNumbers(filepath.Join(d.root, "data", file)) {
			found[n] = true
		}
		n := 0
		for _, a := range acked {
			if !found[a] {
				n++
			}
		}
		return n
	}
	return missing(d.tr.rowsAcked, "rows.txt"), missing(d.tr.tasksAck, "tasks.txt")
}

func readNumbers(path string) []int {
	b, _ := os.ReadFile(path)
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// descendants records the processes below the supervisor.
func (d *driver) descendants() {
	queue := []int{d.cmd.Process.Pid}
	for len(queue) > 0 {
		files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", queue[0]))
		queue = queue[1:]
		for _, f := range files {
			b, _ := os.ReadFile(f)
			for _, s := range strings.Fields(string(b)) {
				if p, err := strconv.Atoi(s); err == nil {
					d.seen[p] = true
					queue = append(queue, p)
				}
			}
		}
	}
}

// killAll kills, by pid, whatever of the server is still running.
func (d *driver) killAll() {
	d.descendants()
	for p := range d.seen {
		if alive(p) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	if alive(d.cmd.Process.Pid) {
		_ = d.cmd.Process.Kill()
		_ = d.cmd.Wait()
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(after, "Z")
}
