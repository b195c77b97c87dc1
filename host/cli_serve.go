package host

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/labstack/gommon/bytes"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// serveCmd is zealgo serve, the default command.
func (c *cli) serveCmd() *cobra.Command {
	a := c.a
	var redisURL string
	var applyDB, applyNATS func(*pflag.FlagSet)
	cmd := c.command("serve", "answer HTTP requests (the default command)", func(cmd *cobra.Command, _ []string) int {
		fs := cmd.Flags()
		applyDB(fs)
		applyNATS(fs)
		// Set only when given: its default would show a URL set in code,
		// and its password, in the help text.
		if fs.Changed("session-redis") {
			if a.cfg.Session.Backend != nil {
				fmt.Fprintln(c.stderr, "zealgo: --session-redis: this application keeps sessions in a store of its own (Config.Session.Backend)")
				return 2
			}
			a.cfg.Session.Redis = redisURL
		}
		return c.serve(cmd.Context())
	})
	fs := cmd.Flags()
	c.rootFlag(cmd)
	fs.StringVar(&a.cfg.Addr, "addr", a.cfg.Addr, "address to listen on (default 127.0.0.1:8080, or :$PORT)")
	c.dataFlag(cmd, "data directory for session files, generated secrets and application data; a relative `DIR` is taken from the working directory")
	redisHelp := "keep sessions in the Redis server at `URL`, e.g. redis://127.0.0.1:6379/0"
	if a.cfg.Session.Redis == "" && a.cfg.Session.Backend == nil {
		redisHelp += " (default $" + SessionRedisEnv + ", else files under the data directory)"
	}
	fs.StringVar(&redisURL, "session-redis", "", redisHelp)
	fs.IntVar(&a.cfg.TaskWorkerNum, "task-workers", a.cfg.TaskWorkerNum, "number of task worker processes")
	fs.BoolVar(&a.cfg.TaskEnableCoroutine, "task-coroutine", a.cfg.TaskEnableCoroutine, "run each task in its own goroutine")
	fs.BoolVar(&a.cfg.Dev, "dev", a.cfg.Dev, "development mode: show compile errors with source in pages")
	applyDB, applyNATS = c.dbFlag(fs), c.natsFlags(cmd)
	c.opsFlags(cmd)
	c.superviseFlags(fs)
	c.edgeFlags(fs)
	return cmd
}

// serve runs the serve command once its flags are applied.
func (c *cli) serve(ctx context.Context) int {
	a := c.a
	if a.cfg.Logger == nil {
		logs, err := newServeLogs(&a.cfg, c.stderr) // accesslog.go
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			return 2
		}
		defer logs.Close()
		a.cfg.Logger = logs.Main
		if a.cfg.Ops.AccessLogger == nil {
			a.cfg.Ops.AccessLogger = logs.Bulk
		}
	}
	defer rtOf(a).ops.logAsDefault()() // slog in handler files writes through the same log
	// In-process, or as the supervisor of a child that is this program
	// with the same arguments and environment (supervise.go).
	return serveCommand(ctx, a, c.args, c.stdout, c.stderr)
}

// rootFlag adds --root, which every command but new and nats takes.
func (c *cli) rootFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.a.cfg.Root, "root", c.a.cfg.Root, "application directory holding api/, public/, task/")
	_ = cmd.MarkFlagDirname("root")
}

// dataFlag adds --data, with help saying its default.
func (c *cli) dataFlag(cmd *cobra.Command, help string) {
	if c.a.cfg.DataDir == "" { // else the flag shows the default the application set
		help += " (default <root>/data, i.e. ./data with the default root)"
	}
	cmd.Flags().StringVar(&c.a.cfg.DataDir, "data", c.a.cfg.DataDir, help)
	_ = cmd.MarkFlagDirname("data")
}

// dbFlag adds --db to a command's flags; the returned func applies it
// after parsing, when it was given (its default would show a URL set in
// code, and its password, in the help text).
func (c *cli) dbFlag(fs *pflag.FlagSet) func(*pflag.FlagSet) {
	var url string
	help := "the database at `URL`: sqlite:PATH or postgres://user:password@host/dbname"
	if c.a.cfg.DB == "" {
		help += " (default $" + DBEnv + ", else SQLite <data>/" + DBFile + ")"
	}
	fs.StringVar(&url, "db", "", help)
	return func(fs *pflag.FlagSet) {
		if fs.Changed("db") {
			c.a.cfg.DB = url
		}
	}
}

// natsFlags adds serve's NATS flags; the returned func applies them
// after parsing. Without --nats, Config.NATS.URL or $ZEALGO_NATS, serve
// uses the embedded server.
func (c *cli) natsFlags(cmd *cobra.Command) func(*pflag.FlagSet) {
	cfg, fs := &c.a.cfg, cmd.Flags()
	var url string
	fs.StringVar(&url, "nats", "", "NATS JetStream for tasks at `URL`: embedded, off, or nats://[token@]host:port, a server "+
		"that several instances share (default Config.NATS.URL, else $"+NATSEnv+", else embedded)")
	fs.StringVar(&cfg.NATS.Instance, "instance", cfg.NATS.Instance, "this instance's `name` on a shared NATS, "+
		"stable across restarts (default: the name kept in <data>/instance)")
	fs.DurationVar(&cfg.NATS.AckWait, "task-ack-wait", cfg.NATS.AckWait, "on NATS, how long a task may go "+
		"without news from its worker before it is delivered again (default 30s)")
	fs.IntVar(&cfg.NATS.MaxDeliver, "task-max-deliver", cfg.NATS.MaxDeliver, "on NATS, how many times a task is "+
		"delivered before it fails with ErrTaskDeliveries (default 5)")
	natsClusterFlags(fs, &cfg.NATS)
	fs.StringVar(&cfg.Session.Store, "session-store", cfg.Session.Store, "where sessions live: file, redis or nats "+
		"(default: redis when set, else nats with a shared --nats URL, else file)")
	complete(cmd, "nats", NATSEmbedded, NATSOff, "nats://")
	complete(cmd, "session-store", "file", "redis", "nats")
	return func(fs *pflag.FlagSet) {
		if fs.Changed("nats") {
			cfg.NATS.URL = url
		}
		if cfg.NATS.URL == "" && os.Getenv(NATSEnv) == "" {
			cfg.NATS.URL = NATSEmbedded
		}
	}
}

// natsClusterFlags adds serve's flags of replication, durability and the
// task limits on NATS.
func natsClusterFlags(fs *pflag.FlagSet, n *NATSConfig) {
	fs.IntVar(&n.Replicas, "nats-replicas", n.Replicas, "copies of each stream and bucket (default: 3 on a cluster of 3 or more, else 1)")
	fs.StringVar(&n.Cluster, "nats-cluster", n.Cluster, "make the embedded server a node of the NATS cluster `NAME`")
	fs.StringVar(&n.ClusterAddr, "nats-cluster-addr", n.ClusterAddr, "`HOST:PORT` the other cluster nodes' routes connect to (default 0.0.0.0:6222)")
	fs.StringSliceVar(&n.Routes, "nats-routes", n.Routes, "the other cluster nodes, nats-route://host:6222,... (with --nats-cluster)")
	fs.StringVar(&n.Sync, "nats-sync", n.Sync, "fsync of the embedded server: always (default: nothing acknowledged is lost with the machine) or an interval such as 1s")
	fs.DurationVar(&n.StartWait, "nats-wait", n.StartWait, "how long serve waits for NATS at start (default 2m)")
	fs.IntVar(&n.Tasks.Attempts, "task-attempts", n.Tasks.Attempts, "on NATS, runs of a failing task before it goes to the dead letters (default 1)")
	fs.DurationVar(&n.Tasks.Backoff, "task-backoff", n.Tasks.Backoff, "on NATS, pause before a failed task runs again, doubled each time (default 1s)")
	fs.DurationVar(&n.Tasks.Timeout, "task-timeout", n.Tasks.Timeout, "on NATS, time limit of one run of a task; its worker is recycled after it (default: none)")
	fs.IntVar(&n.Tasks.MaxQueued, "task-queue-max", n.Tasks.MaxQueued, "on NATS, most tasks waiting; a dispatch beyond fails (default 1000000)")
	fs.IntVar(&n.Tasks.MaxInFlight, "task-max-inflight", n.Tasks.MaxInFlight, "on NATS, most tasks handed to workers and not finished (default 1000)")
	fs.IntVar(&n.Tasks.Streams, "task-streams", n.Tasks.Streams, "on NATS, task streams the tasks are spread over (default: the replica count; 3 on an embedded server alone with --nats-sync always)")
}

// opsFlags adds the flags of health checks, metrics, tracing and logging.
func (c *cli) opsFlags(cmd *cobra.Command) {
	o, fs := &c.a.cfg.Ops, cmd.Flags()
	fs.StringVar(&o.HealthPath, "health-path", o.HealthPath, "`PATH` of the liveness check, answered before routing (empty: none)")
	fs.StringVar(&o.ReadyPath, "ready-path", o.ReadyPath, "`PATH` of the readiness check: database and task workers up, not shutting down (empty: none)")
	fs.DurationVar(&o.DrainDelay, "drain-delay", o.DrainDelay, "at shutdown, serve on this long with the readiness check failing before closing the listener")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr, "serve Prometheus metrics at http://`HOST:PORT`/metrics (default: no metrics)")
	fs.BoolVar(&o.Pprof, "pprof", o.Pprof, "serve net/http/pprof under /debug/pprof/ on the metrics address")
	fs.BoolVar(&o.AccessLog, "access-log", o.AccessLog, "log one record per request")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "log `FORMAT`: text or json (default text)")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "log `LEVEL`: debug, info, warn or error (default info, debug with --dev)")
	complete(cmd, "log-format", "text", "json")
	complete(cmd, "log-level", "debug", "info", "warn", "error")
}

// superviseFlags adds the flags of crash isolation.
func (c *cli) superviseFlags(fs *pflag.FlagSet) {
	a := c.a
	a.sup.enabled = true
	fs.BoolVar(&a.sup.enabled, "supervise", true,
		"run the application in a child process, restarted at once if it dies while the socket stays open (false: in this process, for debugging)")
	fs.DurationVar(&a.cfg.MaxExecutionTime, "max-execution-time", a.cfg.MaxExecutionTime,
		"answer 503 to a request not answered within `D`, and replace the process when its handler runs on (0: no limit)")
	fs.Var((*byteSize)(&a.cfg.MemoryLimit), "memory-limit",
		"memory bound of the supervised process, e.g. 512M, 4G: past it the process ends and is replaced (0: none)")
	a.sup.tiered, a.sup.settle = true, time.Second
	fs.BoolVar(&a.sup.tiered, "tiered", true, "in a module application with a Go toolchain, keep a native build in the background "+
		"and serve from it, interpreting files saved since (docs/tiered.md); false: interpreted only")
	fs.DurationVar(&a.sup.settle, "tier-settle", time.Second, "with --tiered, how long the Go files stay unchanged before a background build starts")
	fs.Var((*byteSize)(&a.cfg.GCFloor), "gc-floor",
		"least heap goal of the garbage collector, e.g. 32M: a small heap is collected when it reaches it (0: Go's own policy, GOGC alone)")
}

// edgeFlags adds the flags of the edge and the input limits.
func (c *cli) edgeFlags(fs *pflag.FlagSet) {
	cfg := &c.a.cfg
	fs.Func("max-body", fmt.Sprintf("largest request body a handler reads, `SIZE` such as 512K, 8M, 1G (default %s)",
		bytes.Format(cfg.MaxBodyBytes)), func(s string) error {
		n, err := bytes.Parse(s)
		if err != nil || n <= 0 {
			return fmt.Errorf("%q is not a size such as 512K, 8M or 1G", s)
		}
		cfg.MaxBodyBytes = n
		return nil
	})
	fs.DurationVar(&cfg.BodyTimeout, "body-timeout", cfg.BodyTimeout,
		"close a request whose body makes no progress for this long (0: no limit)")
	fs.DurationVar(&cfg.WriteTimeout, "write-timeout", cfg.WriteTimeout,
		"cut a handler's response that does not reach the client within this long of its start or of its last flush (0: no limit)")
	fs.Func("allow-origin", "comma-separated `ORIGINS` of front ends on other origins (https://app.example): CORS with credentials, "+
		"and trusted for unsafe cross-origin requests; repeatable",
		func(s string) error { cfg.AllowOrigins = append(cfg.AllowOrigins, splitList(s)...); return nil })
	fs.Func("trusted-origins", "comma-separated `ORIGINS` (https://app.example) allowed to send unsafe cross-origin requests, "+
		"without CORS (--allow-origin does both); * turns the check off",
		func(s string) error { cfg.TrustedOrigins = splitList(s); return nil })
	fs.Func("trusted-proxies", "comma-separated `CIDRS` of reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed",
		func(s string) error { cfg.TrustedProxies = splitList(s); return nil })
	fs.StringVar(&cfg.FrameAncestors, "frame-ancestors", cfg.FrameAncestors,
		"who may frame the pages: the CSP frame-ancestors source list; empty sends no frame headers")
}

// complete offers values to complete a flag with in the shell.
func complete(cmd *cobra.Command, flag string, values ...string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}
