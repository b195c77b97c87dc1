package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zealgo/zealgo/internal/jstask"
	"github.com/zealgo/zealgo/internal/natskv"
	"github.com/zealgo/zealgo/internal/natsrv"
)

// NATSEnv is the environment variable that names the NATS server or
// cluster when neither the serve flag --nats nor Config.NATS.URL does:
// "embedded", "off" or nats://[token@]host:port[,nats://...]. Prefer it
// to the flag for a URL with a token.
const NATSEnv = "ZEALGO_NATS"

// The modes of NATSConfig.URL besides a nats:// URL.
const (
	// NATSEmbedded runs a NATS server with JetStream inside the process.
	NATSEmbedded = "embedded"
	// NATSOff uses no NATS: tasks go to the local worker processes.
	NATSOff = "off"
)

// NATSConfig configures NATS JetStream (Config.NATS), which carries the
// tasks durably and, when several instances share one NATS server or
// cluster, their sessions and rate-limit counters.
type NATSConfig struct {
	// URL is NATSEmbedded, NATSOff, or the nats:// URL of an existing
	// server or cluster (comma-separated URLs), with a token as its user
	// when the server wants one: nats://TOKEN@127.0.0.1:4222. The serve
	// flag --nats sets it. Default "": $ZEALGO_NATS (NATSEnv), else off;
	// the serve command defaults to NATSEmbedded. The embedded server
	// keeps its JetStream store under <DataDir>/nats, listens on a free
	// loopback port and wants a token generated at each start; it starts
	// only when something uses it (task workers, or sessions on NATS).
	URL string
	// Instance names this instance among those sharing NATS: the results
	// of its tasks wait for it under that name while it is down. It must
	// stay the same across restarts and differ between instances; the
	// serve flag --instance sets it. Default: the name kept in
	// <DataDir>/instance, made on the first start from the host name and
	// a random suffix.
	Instance string
	// AckWait is how long a task may run without news from its worker
	// before it is delivered again (a running task's worker renews it),
	// and how long the end of a task handed to an instance that died
	// before acknowledging it waits before it is handed over again, to
	// its restart; default 30s. The serve flag --task-ack-wait sets it.
	AckWait time.Duration
	// MaxDeliver is how many times a task is delivered; after that it
	// finishes as failed with ErrTaskDeliveries. Default 5; the serve
	// flag --task-max-deliver sets it.
	MaxDeliver int
	// Replicas is how many copies of each stream and bucket the cluster
	// keeps. Default 0: 3 on a cluster of three servers or more, else
	// 1. Existing streams and buckets are updated to it at start. The
	// serve flag --nats-replicas sets it.
	Replicas int
	// Cluster makes the embedded server a node of the NATS cluster of
	// that name (--nats-cluster), with routes to the other nodes
	// (Routes, --nats-routes), listening for theirs on ClusterAddr
	// (--nats-cluster-addr, default 0.0.0.0:6222): three machines
	// running zealgo then need no NATS of their own.
	Cluster     string
	ClusterAddr string
	Routes      []string
	// Sync is the embedded server's fsync policy (--nats-sync): "always"
	// (the default: a task acknowledged to its dispatcher is on disk,
	// also when the machine loses power) or an interval such as "1s"
	// (faster; the last interval's writes can be lost with the machine,
	// not with the process; safe enough on a cluster of three, where
	// each write is on two machines before it is acknowledged).
	Sync string
	// StartWait is how long serve waits for the NATS server or cluster
	// to answer at start, retrying, before it gives up; default 2m. The
	// serve flag --nats-wait sets it.
	StartWait time.Duration
	// Tasks are the retries, time limits and bounds of tasks on NATS.
	Tasks TaskLimits
}

// TaskLimits are the retries, time limits and bounds of tasks on NATS
// (NATSConfig.Tasks). The zero value of each field means its default.
type TaskLimits struct {
	// Attempts is how many times a failed task (an error, a panic, its
	// time limit) runs before it is given up to the dead letters (zealgo
	// tasks); default 1: no retry. Serve flag --task-attempts.
	Attempts int
	// Backoff is the pause before the second attempt, doubled at each
	// further one; default 1s. Serve flag --task-backoff.
	Backoff time.Duration
	// Timeout bounds one run of a task: its context is cancelled then,
	// it counts an attempt, and a task that still runs a second later
	// makes its worker process recycle. Default 0: none. Serve flag
	// --task-timeout.
	Timeout time.Duration
	// MaxQueued bounds the tasks waiting in the queue: Server.Task
	// fails with ErrTaskQueueFull beyond it. Default 1,000,000; serve
	// flag --task-queue-max.
	MaxQueued int
	// MaxInFlight bounds the tasks delivered to workers and not yet
	// finished, across every instance's workers; default 1,000; serve
	// flag --task-max-inflight.
	MaxInFlight int
	// Streams is how many task streams the tasks are spread over. Each
	// stream stores its tasks one at a time, so that when every write
	// waits for the disk (--nats-sync always) more streams write more
	// tasks at once. Default: the replica count (one stream led by each
	// node of a cluster), and 3 on an embedded server alone that syncs
	// always. All instances should use the same; workers read every
	// task stream there is. Serve flag --task-streams.
	Streams int
}

// WithNATS sets Config.NATS.URL: NATSEmbedded, NATSOff or a nats:// URL.
func WithNATS(url string) Option { return func(c *Config) { c.NATS.URL = url } }

// natsState is the application's NATS connection (nil conn: none), and
// the embedded server when it runs one.
type natsState struct {
	srv      *natsrv.Server
	conn     *natsrv.Conn
	url      string // as the task workers reach it
	token    string // the embedded server's
	instance string
	shared   bool             // an existing server, which other instances may share
	counter  *natskv.Counter  // the throttle's attempts; rate-limit counters when shared
	replicas int              // of each stream and bucket
	spread   *natsrv.Spreader // keeps the leaders apart on a cluster (nil: one server)
}

// natsMode returns Config.NATS.URL, else $ZEALGO_NATS, else "off".
func natsMode(cfg *Config) string {
	mode := cfg.NATS.URL
	if mode == "" {
		mode = os.Getenv(NATSEnv)
	}
	if mode == "" {
		mode = NATSOff
	}
	return mode
}

// startNATS starts the embedded server or connects to an existing one,
// at start-up, when the application uses NATS (a zero natsState: none).
func startNATS(cfg *Config, log *slog.Logger) (natsState, error) {
	mode := natsMode(cfg)
	switch {
	case mode == NATSOff:
		return natsState{}, nil
	case mode == NATSEmbedded && !usesEmbeddedNATS(cfg):
		return natsState{}, nil // nothing would use it
	case mode != NATSEmbedded && !strings.HasPrefix(mode, "nats://") && !strings.HasPrefix(mode, "tls://"):
		return natsState{}, fmt.Errorf("zealgo: nats %q: want %q, %q or a nats:// URL", redactNATS(mode), NATSEmbedded, NATSOff)
	}
	instance, err := instanceName(cfg)
	if err != nil {
		return natsState{}, err
	}
	st := natsState{url: mode, instance: instance, shared: mode != NATSEmbedded}
	if !st.shared {
		if err := st.embed(cfg, log); err != nil {
			return natsState{}, err
		}
	}
	st.conn, err = connectNATS(cfg, st.url, "zealgo "+instance, st.token, log)
	if err == nil {
		st.replicas = replicas(cfg, st.conn)
		st.counter, err = openCounter(cfg, st.conn, st.replicas, log)
	}
	if err != nil {
		st.close()
		return natsState{}, err
	}
	if st.replicas > 1 {
		st.spread = natsrv.StartSpreader(st.conn.JS, natsrv.SpreadConfig{Groups: spreadGroups(), Logger: log})
	}
	where := redactNATS(st.url)
	switch {
	case !st.shared && st.srv == nil:
		where = "embedded at " + where + " (run by the supervisor), data in " + filepath.Join(cfg.DataDir, "nats")
	case !st.shared:
		where = "embedded at " + where + ", data in " + filepath.Join(cfg.DataDir, "nats")
	}
	log.Info("zealgo: NATS JetStream", "server", where, "instance", instance, "replicas", st.replicas)
	return st, nil
}

// connectNATS connects to the server or cluster, waiting for it up to
// NATSConfig.StartWait (default 2m) and saying so every ten seconds: a
// cluster that is slow to start or to elect its leaders is waited for.
func connectNATS(cfg *Config, url, name, token string, log *slog.Logger) (*natsrv.Conn, error) {
	wait := startWait(cfg)
	deadline := time.Now().Add(wait)
	for {
		conn, err := natsrv.Connect(context.Background(), url, natsrv.ConnectOptions{Name: name, Token: token,
			Timeout: min(10*time.Second, time.Until(deadline))})
		if err == nil || time.Now().After(deadline) || strings.Contains(err.Error(), "refused the connection") {
			if err != nil {
				err = fmt.Errorf("%w (waited %v; --nats-wait waits longer)", err, wait)
			}
			return conn, err
		}
		log.Warn("zealgo: waiting for NATS", "server", redactNATS(url), "err", err, "until", deadline.Format(time.TimeOnly))
	}
}

// spreadGroups are the streams and buckets whose leaders are spread
// over a cluster's servers (natsrv.Spreader), by group: the task streams
// first, one per server, so that dispatch goes on through the others
// when a server is lost; then what a request or a dispatch waits for
// (results, task ids, sessions); then the rest (dead letters, task runs,
// counters, App.KV's buckets).
func spreadGroups() [][]string {
	g := jstask.SpreadGroups(jstask.Config{})
	return [][]string{g[0], append(g[1], "KV_"+natskv.SessionsBucket),
		append(g[2], "KV_"+natskv.CountersBucket, "KV_"+natsBucketPrefix+"*")}
}

// startWait is NATSConfig.StartWait, 2 minutes by default.
func startWait(cfg *Config) time.Duration {
	if cfg.NATS.StartWait > 0 {
		return cfg.NATS.StartWait
	}
	return 2 * time.Minute
}

// openCounter opens the counters' bucket, the first one start-up creates,
// waiting up to NATSConfig.StartWait while a cluster that has just formed
// elects its leaders or cannot place the replicas yet
// (natsrv.WhileForming).
func openCounter(cfg *Config, conn *natsrv.Conn, replicas int, log *slog.Logger) (*natskv.Counter, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startWait(cfg))
	defer cancel()
	var c *natskv.Counter
	err := natsrv.WhileForming(ctx, log, "the counters' bucket", func(ctx context.Context) (err error) {
		c, err = natskv.OpenCounter(ctx, conn.JS, natskv.CounterConfig{Replicas: replicas})
		return err
	})
	return c, err
}

// replicas is NATSConfig.Replicas, else the cluster's choice: 3 on a
// cluster of three or more (a node of the embedded cluster counts its
// routes), else 1.
func replicas(cfg *Config, conn *natsrv.Conn) int {
	if n := cfg.NATS.Replicas; n > 0 {
		return n
	}
	if cfg.NATS.Cluster != "" && natsMode(cfg) == NATSEmbedded && len(cfg.NATS.Routes)+1 >= 3 {
		return 3
	}
	return conn.Replicas(0, 3*time.Second)
}

// embeddedConfig is the configuration of the embedded server: its data
// under <DataDir>/nats, a node of NATSConfig.Cluster when set.
func embeddedConfig(cfg *Config, token string, log *slog.Logger) (natsrv.Config, error) {
	c := natsrv.Config{DataDir: filepath.Join(cfg.DataDir, "nats"), Token: token, Logger: log, Sync: cfg.NATS.Sync,
		Cluster: natsrv.ClusterConfig{Name: cfg.NATS.Cluster, Listen: cfg.NATS.ClusterAddr, Routes: cfg.NATS.Routes}}
	if c.Cluster.Name != "" {
		instance, err := instanceName(cfg)
		if err != nil {
			return c, err
		}
		c.Name = "zealgo-" + instance // unique in the cluster
	}
	return c, nil
}

// usesEmbeddedNATS reports whether something would use the embedded
// server: task workers, or sessions on NATS.
func usesEmbeddedNATS(cfg *Config) bool {
	return cfg.TaskWorkerNum > 0 || cfg.Session.Store == "nats"
}

// supervisorNATSEnv hands the embedded server that serve's supervisor runs
// to its child: nats://TOKEN@127.0.0.1:PORT. The supervisor sets it for
// the child alone; it is no setting for users.
const supervisorNATSEnv = "ZEALGO_NATS_SUPERVISOR"

// embed starts the embedded server for st, or, in a child of serve's
// supervisor, connects st to the one the supervisor runs (superviseNATS).
func (st *natsState) embed(cfg *Config, log *slog.Logger) error {
	if v := os.Getenv(supervisorNATSEnv); v != "" {
		u, err := url.Parse(v)
		if err != nil || u.User == nil {
			return fmt.Errorf("zealgo: $%s does not hold the supervisor's NATS server", supervisorNATSEnv)
		}
		st.token = u.User.Username()
		u.User = nil
		st.url = u.String()
		return nil
	}
	st.token = rand.Text()
	nc, err := embeddedConfig(cfg, st.token, log)
	if err != nil {
		return err
	}
	srv, err := natsrv.Start(nc)
	if err != nil {
		return err
	}
	markCrash(cfg, srv, st.token, log)
	st.srv, st.url = srv, srv.URL()
	return writeClientFile(cfg.DataDir, tokenURL(st.url, st.token))
}

// superviseNATS runs the embedded server in serve's supervisor, when the
// application embeds one, and returns it (nil: none) with the environment
// that hands it to the children. It outlives them: the tasks queued when a
// child dies stay queued for its replacement, and a child replaced while
// it drains never runs a second server on the same store. prepare readies
// the application's directories and logger, when a server is wanted.
func superviseNATS(cfg *Config, prepare func() (*slog.Logger, error)) (*natsrv.Server, []string, error) {
	if natsMode(cfg) != NATSEmbedded || !usesEmbeddedNATS(cfg) {
		return nil, nil, nil
	}
	log, err := prepare()
	if err != nil {
		return nil, nil, err
	}
	token := rand.Text()
	nc, err := embeddedConfig(cfg, token, log)
	if err != nil {
		return nil, nil, err
	}
	srv, err := natsrv.Start(nc)
	if err != nil {
		return nil, nil, err
	}
	markCrash(cfg, srv, token, log)
	u, err := url.Parse(srv.URL())
	if err != nil {
		srv.Shutdown()
		return nil, nil, fmt.Errorf("zealgo: nats: %w", err)
	}
	u.User = url.User(token)
	if err := writeClientFile(cfg.DataDir, u.String()); err != nil {
		srv.Shutdown()
		return nil, nil, err
	}
	return srv, []string{supervisorNATSEnv + "=" + u.String()}, nil
}

// markCrash records, when the embedded server starts again after a crash
// and before any worker pulls, the tasks it may have delivered just
// before without remembering it, so that their next run shows as a
// second delivery (jstask.MarkCrash). A node of a cluster has its
// consumers' state from the other nodes.
func markCrash(cfg *Config, srv *natsrv.Server, token string, log *slog.Logger) {
	if !srv.Unclean() || cfg.NATS.Cluster != "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := natsrv.Connect(ctx, srv.URL(), natsrv.ConnectOptions{Name: "zealgo crash check", Token: token})
	if err == nil {
		defer conn.Close()
		err = jstask.MarkCrash(ctx, conn.JS, jstask.Config{MaxInFlight: cfg.NATS.Tasks.MaxInFlight, Logger: log})
	}
	if err != nil {
		log.Error("zealgo: nats: after a crash of the embedded server", "err", err)
	}
}

// ready is the readiness probe of NATS (tasks and sessions on NATS): the
// connection is up.
func (st *natsState) ready(context.Context) (bool, error) {
	c := st.conn
	if c == nil {
		return false, nil
	}
	if !c.NC.IsConnected() {
		return true, errors.New("zealgo: nats: " + c.NC.Status().String())
	}
	return true, nil
}

// close closes the connection and stops the embedded server, last at
// shutdown.
func (st *natsState) close() {
	st.spread.Stop()
	if st.conn != nil {
		st.conn.Close()
	}
	if st.srv != nil {
		st.srv.Shutdown()
	}
	*st = natsState{}
}

// instanceName returns Config.NATS.Instance, else the name kept in
// <DataDir>/instance, which it makes on the first start.
func instanceName(cfg *Config) (string, error) {
	if n := cfg.NATS.Instance; n != "" {
		if len(n) > 64 || !validName(n) {
			return "", fmt.Errorf("zealgo: instance name %q: want 1 to 64 letters, digits, '_' or '-'", n)
		}
		return n, nil
	}
	path := filepath.Join(cfg.DataDir, "instance")
	for range 3 {
		b, err := os.ReadFile(path)
		if n := strings.TrimSpace(string(b)); err == nil && validName(n) && len(n) <= 64 {
			return n, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("zealgo: instance name: %w", err)
		}
		if err == nil { // being written by another process, or broken
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err := writeInstanceName(path); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("zealgo: instance name: %w", err)
		}
	}
	return "", fmt.Errorf("zealgo: instance name: %s does not hold one; remove it or set --instance", path)
}

// writeInstanceName makes the file of the instance name: the host name's
// letters and digits and a random suffix; it fails with fs.ErrExist when
// another process made it first.
func writeInstanceName(path string) error {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r < 128 && validName(string(r)) {
			return r
		}
		return '-'
	}, host)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.Trim(host[:min(len(host), 40)], "-") + "-" + hex.EncodeToString(b[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.TrimPrefix(name, "-") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// clientFile is where the embedded server's client URL, with its token,
// is kept while it runs (<data>/nats/client.url, readable by the owner
// alone): zealgo tasks finds the server there.
func clientFile(dataDir string) string { return filepath.Join(dataDir, "nats", "client.url") }

// writeClientFile records the embedded server's URL and token for zealgo
// tasks.
func writeClientFile(dataDir, url string) error {
	if err := os.WriteFile(clientFile(dataDir), []byte(url+"\n"), 0o600); err != nil {
		return fmt.Errorf("zealgo: nats: %w", err)
	}
	return nil
}

// tokenURL returns raw with token as its user.
func tokenURL(raw, token string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.User = url.User(token)
	return u.String()
}

// redactNATS hides the token or password of NATS URLs, for messages.
func redactNATS(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			u.User = url.User("redacted")
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}
