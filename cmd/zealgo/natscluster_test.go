package main

// A zealgo instance on a real three-node NATS cluster (standalone
// nats-server processes): replication by default, and the loss of the
// node leading the task stream under load.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/natsrv"
	"github.com/zealgo/zealgo/internal/testutil"
)

// keyedApp dispatches task n with the idempotency key "n-<n>", so that a
// client's retry makes no second task; each run of the task logs
// "ran n<n> d<delivery>".
var keyedApp = map[string]string{
	"api/login.go": clusterApp["api/login.go"],
	"api/ping.go":  clusterApp["api/ping.go"],
	"api/dispatch.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		`var post = func(api *host.API) any {
	user := api.G().Session.String("user")
	if user == "" {
		api.Response(map[string]any{"error": "not logged in"}, 401)
		return nil
	}
	n, _ := api.Int("n")
	id, err := api.Task(host.Task{Handler: "/task/work", Args: []any{n}, Key: fmt.Sprint("n-", n)})
	if errors.Is(err, host.ErrTaskDuplicate) {
		return map[string]any{"id": -1, "user": user}
	}
	if err != nil {
		api.Response(map[string]any{"error": err.Error()}, 503)
		return nil
	}
	return map[string]any{"id": id, "user": user}
}
`,
	"task/work.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		`var work = func(ti *host.TaskInfo, n int) any {
	ti.Log.Info(fmt.Sprintf("ran n%d d%d", n, ti.Delivery))
	return map[string]any{"n": n, "delivery": ti.Delivery}
}
`,
}

// TestNATSClusterLosesTaskStreamLeader: one instance on a three-node
// cluster with default flags; every stream and bucket has 3 replicas.
// Under load (a logged-in client dispatching tasks with idempotency keys,
// retrying on errors), the node leading the task stream is killed with
// SIGKILL: no acknowledged task is lost, none runs twice without its
// TaskInfo.Delivery showing it, the client stays logged in, and dispatch
// stalls less than 3 s (it goes on through the other task streams while
// the cluster elects a new leader, 4 to 9 s later); the figures are
// logged. The kill comes once the instance has spread the leaders over
// the nodes (natsrv.Spreader), the case the bound is designed for.
func TestNATSClusterLosesTaskStreamLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	t.Parallel() // mostly waits on the cluster's elections
	nodes, urls := testutil.NATSCluster(t, 3)
	root, data, addr := testutil.WriteTree(t, keyedApp), t.TempDir(), testutil.FreeAddr(t)
	p := start(t, addr, []string{"ZEALGO_SESSION_SECRET=" + strings.Repeat("c", 40)},
		"serve", "--root", root, "--addr", addr, "--data", data, "--nats", urls, "--session-store", "nats",
		"--task-workers", "2", "--task-ack-wait", "3s")
	p.waitHTTP(t)
	conn, err := natsrv.Connect(context.Background(), urls, natsrv.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range []string{"ZEALGO_TASKS", "ZEALGO_TASKS_1", "ZEALGO_TASKS_2", "ZEALGO_RESULTS", "ZEALGO_IDS", "ZEALGO_DEAD", "KV_zealgo_sessions", "KV_zealgo_counters", "KV_zealgo_task_runs"} {
		st, err := conn.JS.Stream(context.Background(), s)
		if err != nil {
			t.Fatalf("stream %s: %v", s, err)
		}
		if r := st.CachedInfo().Config.Replicas; r != 3 {
			t.Errorf("stream %s has %d replicas, want 3", s, r)
		}
	}
	// The designed case: the leaders spread over the three nodes
	// (natsrv.Spreader), which the instance does in the background.
	var why string
	began := time.Now()
	if !testutil.Poll(90*time.Second, func() bool { why = leadersSpread(conn); return why == "" }) {
		t.Fatalf("the leaders were not spread within 90s: %s; log:\n%s", why, grepLines(p.logs.String(), "nats"))
	}
	t.Logf("leaders spread %v after the instance answered: %s", time.Since(began).Round(time.Millisecond),
		grepLines(p.logs.String(), "stream leaders spread"))
	kc := loggedInClient(t, addr)
	const total = 3000
	killed := make(chan time.Time, 1)
	go func() {
		testutil.Poll(60*time.Second, func() bool { return kc.accepted.Load() >= total/3 })
		if why := leadersSpread(conn); why != "" {
			t.Logf("the leaders are not spread at the kill: %s", why)
		}
		leaders := leadersOf(conn)
		for _, n := range nodes {
			if n.Name == leaders["ZEALGO_TASKS"] {
				t.Logf("killing %s, the leader of ZEALGO_TASKS, after %d tasks; leaders: %v", n.Name, kc.accepted.Load(), leaders)
				now := time.Now()
				n.Kill()
				killed <- now
				return
			}
		}
		killed <- time.Time{}
	}()
	kc.run(t, total, 8)
	if kc.broken.Load() {
		t.FailNow()
	}
	at := <-killed
	if at.IsZero() {
		t.Fatal("the leader of ZEALGO_TASKS was not found or not killed")
	}
	if !testutil.PollEvery(90*time.Second, logPoll, func() bool { return len(ranOK(t, p.logs.String())) == total }) {
		runs := ranOK(t, p.logs.String())
		var missing []int
		for n := range total {
			if _, ok := runs[n]; !ok {
				missing = append(missing, n)
			}
		}
		var warns []string
		for l := range strings.Lines(p.logs.String()) {
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "task failed") {
				warns = append(warns, l)
			}
		}
		t.Fatalf("%d acknowledged tasks never ran: %v; warnings:\n%s", len(missing), missing[:min(len(missing), 20)],
			strings.Join(warns[:min(len(warns), 40)], ""))
	}
	runs := ranOK(t, p.logs.String())
	invisible := kc.checkRuns(t, runs, total)
	// The cluster elects a new leader of each stream the killed node
	// led 4 to 9 s after it stops (nats-server's election timeout, not
	// configurable); dispatch does not wait for it: it goes to the other
	// task streams, led by the other nodes, with ids reserved ahead and
	// sessions read from any replica. The bound: under 3 s.
	stall, elected := kc.stall(at), electedAfter(nodes, "ZEALGO_TASKS", at)
	if stall >= 3*time.Second {
		t.Errorf("dispatch stalled %v after the kill (the cluster elected a new leader of ZEALGO_TASKS %v after it), want under 3s",
			stall, elected)
	}
	t.Logf("dispatch: %d tasks, %d retries by the client; longest stall after the kill %v (the cluster elected a new "+
		"leader of ZEALGO_TASKS %v after it); reruns seen %d, invisible duplicates %d, lost 0, logouts %d",
		total, kc.retried.Load(), stall.Round(time.Millisecond), elected.Round(time.Millisecond),
		reruns(p.logs.String()), invisible, kc.logouts.Load())
}

// grepLines returns the lines of logs that hold s.
func grepLines(logs, s string) string {
	var out []string
	for l := range strings.Lines(logs) {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// leadersOf returns the leader of each stream (streams with no leader
// are left out).
func leadersOf(conn *natsrv.Conn) map[string]string {
	out := map[string]string{}
	list := conn.JS.ListStreams(context.Background())
	for info := range list.Info() {
		if info.Cluster != nil && info.Cluster.Leader != "" {
			out[info.Config.Name] = info.Cluster.Leader
		}
	}
	return out
}

// leadersSpread returns why the leaders are not spread over the three
// nodes ("": they are): the task streams on three nodes, the results,
// ids and sessions on three nodes, and each consumer of those streams
// led by its stream's leader.
func leadersSpread(conn *natsrv.Conn) string {
	leaders := leadersOf(conn)
	for _, group := range [][]string{{"ZEALGO_TASKS", "ZEALGO_TASKS_1", "ZEALGO_TASKS_2"}, {"ZEALGO_RESULTS", "ZEALGO_IDS", "KV_zealgo_sessions"}} {
		seen := map[string]bool{}
		for _, s := range group {
			if leaders[s] == "" || seen[leaders[s]] {
				return fmt.Sprintf("leaders %v", leaders)
			}
			seen[leaders[s]] = true
		}
	}
	for _, s := range []string{"ZEALGO_TASKS", "ZEALGO_TASKS_1", "ZEALGO_TASKS_2", "ZEALGO_RESULTS"} {
		st, err := conn.JS.Stream(context.Background(), s)
		if err != nil {
			return err.Error()
		}
		list := st.ListConsumers(context.Background())
		for ci := range list.Info() {
			if ci.Cluster != nil && ci.Cluster.Leader != leaders[s] {
				return fmt.Sprintf("consumer %s of %s is led by %s, the stream by %s", ci.Name, s, ci.Cluster.Leader, leaders[s])
			}
		}
		if err := list.Err(); err != nil {
			return err.Error()
		}
	}
	return ""
}

// streamLeaderRE matches nats-server's log line of a new stream leader,
// with its time.
var streamLeaderRE = regexp.MustCompile(`(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d+) \[INF\] JetStream cluster new stream leader for '\$G > (\w+)'`)

// electedAfter is how long after at the surviving nodes logged a new
// leader of stream (0: none logged).
func electedAfter(nodes []*testutil.NATSNode, stream string, at time.Time) time.Duration {
	for _, n := range nodes {
		for _, m := range streamLeaderRE.FindAllStringSubmatch(n.Logs.String(), -1) {
			when, err := time.ParseInLocation("2006/01/02 15:04:05.000000", m[1], time.Local)
			if err == nil && m[2] == stream && when.After(at) {
				return when.Sub(at)
			}
		}
	}
	return 0
}

var ranRE = regexp.MustCompile(`ran n(\d+) d(\d+)`)

// ranOK counts the first deliveries of each task n that ran, from the log.
func ranOK(t *testing.T, logs string) map[int]int {
	firsts := map[int]int{}
	for _, m := range ranRE.FindAllStringSubmatch(logs, -1) {
		n, _ := strconv.Atoi(m[1])
		if _, ok := firsts[n]; !ok {
			firsts[n] = 0
		}
		if m[2] == "1" {
			firsts[n]++
		}
	}
	return firsts
}

// reruns counts the runs with a delivery above 1.
func reruns(logs string) int {
	n := 0
	for _, m := range ranRE.FindAllStringSubmatch(logs, -1) {
		if m[2] != "1" {
			n++
		}
	}
	return n
}

// loggedInClient returns a keyedClient of the server at addr, logged in
// as ada (keyedApp's login keeps her in the session).
func loggedInClient(t *testing.T, addr string) *keyedClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	kc := &keyedClient{base: "http://" + addr, c: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
	resp, err := kc.c.Post(kc.base+"/api/login", "application/x-www-form-urlencoded", strings.NewReader("user=ada"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return kc
}

// checkRuns fails t for each task of the total that ran more than once
// with TaskInfo.Delivery 1 (runs, from ranOK) and for each logout the
// client saw, and returns how many tasks ran twice invisibly.
func (kc *keyedClient) checkRuns(t *testing.T, runs map[int]int, total int) int {
	t.Helper()
	invisible := 0
	for n := range total {
		if runs[n] > 1 {
			invisible++
		}
	}
	if invisible > 0 {
		t.Errorf("%d tasks ran more than once with TaskInfo.Delivery 1", invisible)
	}
	if kc.logouts.Load() > 0 {
		t.Errorf("the client was logged out %d times", kc.logouts.Load())
	}
	return invisible
}

// keyedClient dispatches tasks with retries, recording when each was
// accepted.
type keyedClient struct {
	base     string
	c        *http.Client
	mu       sync.Mutex
	times    []time.Time
	accepted atomic.Int64
	retried  atomic.Int64
	logouts  atomic.Int64
	broken   atomic.Bool // a dispatch failed: the run stops
}

// run dispatches tasks 0 to total-1 with conc clients at once.
func (kc *keyedClient) run(t *testing.T, total, conc int) {
	var wg sync.WaitGroup
	var next atomic.Int64
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := int(next.Add(1) - 1); n < total && !kc.broken.Load(); n = int(next.Add(1) - 1) {
				kc.dispatch(t, n)
			}
		}()
	}
	wg.Wait()
}

// dispatch sends task n until the instance accepts it, for 30s at most.
func (kc *keyedClient) dispatch(t *testing.T, n int) {
	var body []byte
	code := 0
	ok := testutil.Poll(30*time.Second, func() bool {
		resp, err := kc.c.Post(kc.base+"/api/dispatch", "application/json", strings.NewReader(fmt.Sprintf(`{"n":%d}`, n)))
		if err != nil {
			kc.retried.Add(1)
			return false
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if code = resp.StatusCode; code != 200 && code != http.StatusUnauthorized {
			kc.retried.Add(1)
			return false
		}
		return true
	})
	var d struct {
		ID   int64
		User string
	}
	switch {
	case !ok:
		kc.broken.Store(true)
		t.Errorf("task %d: not accepted within 30s: %d %s", n, code, body)
	case code == http.StatusUnauthorized:
		kc.logouts.Add(1)
	case json.Unmarshal(body, &d) != nil || d.ID == 0 || d.User != "ada":
		kc.broken.Store(true)
		t.Errorf("task %d: %s", n, body)
	default:
		kc.mu.Lock()
		kc.times = append(kc.times, time.Now())
		kc.mu.Unlock()
		kc.accepted.Add(1)
	}
}

// stall is the longest pause between two accepted dispatches after at.
func (kc *keyedClient) stall(at time.Time) time.Duration {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	ts := append([]time.Time{at}, kc.times...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	var longest time.Duration
	for i := 1; i < len(ts); i++ {
		if ts[i].After(at) || ts[i].Equal(at) {
			longest = max(longest, ts[i].Sub(ts[i-1]))
		}
	}
	return longest
}

// TestNATSEmbeddedClusterReplicas: three zealgo instances whose embedded
// servers form one cluster (--nats-cluster, --nats-routes), with default
// flags otherwise: every stream and bucket has 3 replicas, and the three
// task streams are led by three different nodes.
func TestNATSEmbeddedClusterReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	t.Parallel() // mostly waits on the cluster's elections
	root := testutil.WriteTree(t, keyedApp)
	routes := make([]string, 3)
	for i := range routes {
		routes[i] = testutil.FreeAddr(t)
	}
	var data []string
	var procs []*process
	for i := range routes {
		var others []string
		for j, r := range routes {
			if j != i {
				others = append(others, "nats-route://"+r)
			}
		}
		d, addr := t.TempDir(), testutil.FreeAddr(t)
		data = append(data, d)
		procs = append(procs, start(t, addr, []string{"ZEALGO_SESSION_SECRET=" + strings.Repeat("c", 40)},
			"serve", "--root", root, "--addr", addr, "--data", d, "--nats", "embedded", "--session-store", "nats",
			"--task-workers", "1", "--instance", fmt.Sprintf("node%d", i+1), "--nats-cluster", "zt",
			"--nats-cluster-addr", routes[i], "--nats-routes", strings.Join(others, ",")))
	}
	for _, p := range procs {
		p.waitHTTP(t)
	}
	url, err := os.ReadFile(filepath.Join(data[0], "nats", "client.url"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := natsrv.Connect(context.Background(), strings.TrimSpace(string(url)), natsrv.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	want := map[string]bool{"ZEALGO_TASKS": false, "ZEALGO_TASKS_1": false, "ZEALGO_TASKS_2": false, "ZEALGO_RESULTS": false,
		"ZEALGO_IDS": false, "ZEALGO_DEAD": false, "KV_zealgo_sessions": false, "KV_zealgo_counters": false, "KV_zealgo_task_runs": false}
	streams := conn.JS.ListStreams(context.Background())
	for info := range streams.Info() {
		if _, ok := want[info.Config.Name]; ok {
			want[info.Config.Name] = true
		}
		if info.Config.Replicas != 3 {
			t.Errorf("stream %s has %d replicas, want 3", info.Config.Name, info.Config.Replicas)
		}
	}
	if err := streams.Err(); err != nil {
		t.Fatal(err)
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("stream %s is missing", name)
		}
	}
	var leaders map[string]bool
	spread := testutil.Poll(20*time.Second, func() bool {
		leaders = map[string]bool{}
		for _, s := range []string{"ZEALGO_TASKS", "ZEALGO_TASKS_1", "ZEALGO_TASKS_2"} {
			st, err := conn.JS.Stream(context.Background(), s)
			if err != nil || st.CachedInfo().Cluster == nil {
				return false
			}
			leaders[st.CachedInfo().Cluster.Leader] = true
		}
		return len(leaders) == 3
	})
	if !spread {
		t.Errorf("the three task streams are led by %d nodes, want 3", len(leaders))
	}
}
