package host

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/zealgo/zealgo/internal/buildgen"
	"github.com/zealgo/zealgo/interp"
)

// Main runs the command line of an application and exits with its status:
//
//	serve   answer HTTP requests (the default)
//	check   check every handler, page and task file and every template; exit 1 on problems
//	routes  list the endpoints and pages with their methods
//	migrate run the .sql files under migrations/ that have not run (takes
//	        --data and --db as serve does)
//	nats    run the embedded NATS server alone (--addr, --data), for
//	        several instances on one machine
//	new     zealgo new DIR [--module PATH]: write a new application into a
//	        missing or empty DIR, with a go.mod requiring this zealgo (and
//	        replacing it with the source checkout it was built from, or
//	        $ZEALGO_SOURCE), then run go mod tidy there when go is on the PATH
//	build   zealgo build [-o FILE] [--embed] [--main PKG]: compile every
//	        handler, page and task file with the Go compiler into one
//	        binary whose main is this program's (build.go, compiled.go)
//	help    list the commands
//
// Every command but new takes --root DIR, the application directory (default ".");
// check also takes --json (its problems as one JSON object).
// serve also takes:
//
//	--addr HOST:PORT      address to listen on (default 127.0.0.1:8080, or :$PORT)
//	--data DIR            data directory: session files, generated secrets,
//	                      application data (default <root>/data, which is
//	                      ./data with the default root; a relative DIR is
//	                      taken from the working directory, not from the root)
//	--session-redis URL   keep sessions in Redis, e.g. redis://127.0.0.1:6379/0
//	                      (default: Config.Session.Redis, else
//	                      $ZEALGO_SESSION_REDIS, else files under the data
//	                      directory; refused when the application sets
//	                      Config.Session.Backend)
//	--task-workers N      number of task worker processes (default 0)
//	--task-coroutine=BOOL run each task in its own goroutine (default true)
//	--dev                 development mode
//	--db URL              the database, sqlite:PATH or postgres://... (default
//	                      Config.DB, else $ZEALGO_DB, else SQLite
//	                      <data>/app.db); see App.DB
//	--health-path, --ready-path, --drain-delay, --metrics-addr, --pprof,
//	--access-log, --log-format, --log-level
//	                      operations: see OpsConfig
//	--max-body SIZE       largest request body a handler reads (default 8M)
//	--body-timeout D      close a body that makes no progress for D (default 60s)
//	--write-timeout D     cut a response not sent within D of its start or
//	                      of its last flush (default 60s)
//	--trusted-origins L   origins allowed to send unsafe cross-origin requests
//	--trusted-proxies L   CIDRs of proxies whose X-Forwarded-* are believed
//	--frame-ancestors S   CSP frame-ancestors (default 'none'; "" for none)
//	--nats URL            NATS JetStream for tasks: embedded (the default),
//	                      off, or nats://[token@]host:port of a server that
//	                      several instances share (NATSConfig)
//	--instance NAME       this instance's name on NATS (default kept in
//	                      <data>/instance)
//	--task-ack-wait D, --task-max-deliver N   redelivery of tasks on NATS
//	--session-store S     file, redis or nats (SessionConfig.Store)
//	--max-execution-time D  answer 503 to a request not answered within D
//	                      (default 30s; 0: no limit), and replace the
//	                      process when its handler runs on
//	--memory-limit SIZE   memory bound of the supervised process (default
//	                      4G; 0: none)
//	--supervise=BOOL      run the application in a child process under a
//	                      supervisor that holds the socket and restarts it
//	                      at once when it dies (default true; false serves
//	                      in this process, for debugging)
//
// Main supervises serve; App.Run, Handler and Serve, called by Go code,
// serve in-process.
//
// Every flag can also be set by the environment variable ZEALGO_<FLAG>
// (upper case, dashes to underscores: ZEALGO_TASK_WORKERS); a flag on the
// command line wins over its variable. The environment variables
// ZEALGO_SESSION_SECRET (SessionSecretEnv),
// ZEALGO_SESSION_REDIS (SessionRedisEnv), ZEALGO_BASIC_AUTH
// (BasicAuthEnv), ZEALGO_DB (DBEnv) and ZEALGO_NATS (NATSEnv) are read
// at start-up. For the
// session store and the database, a flag wins over what the application's
// main set in Config, which wins over the environment.
func Main(app *App) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	app.sup.fromMain = true // serve supervises (supervise.go)
	code := app.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is a subcommand of Run.
type command struct {
	summary string
	run     func(a *App, ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands are the subcommands of Run.
var commands = map[string]command{
	"serve":  {"answer HTTP requests", (*App).cmdServe},
	"check":  {"check every handler, page and task file and every template; exit 1 on problems", (*App).cmdCheck},
	"routes": {"list the endpoints and pages with their methods", (*App).cmdRoutes},
	"worker": {"", (*App).cmdWorker}, // hidden: a task worker, started by serve (task_worker.go)
	// migrate is added by db.go
}

// Run runs the command line args (without the program name) and returns
// the exit status. Serving stops when ctx is done.
func (a *App) Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := "serve"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || isHelp(args[0])) {
		name, args = args[0], args[1:]
	}
	if name == "help" || isHelp(name) {
		usage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "zealgo: unknown command %q\n", name)
		usage(stderr)
		return 2
	}
	return c.run(a, ctx, args, stdout, stderr)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: zealgo <command> [flags]   (zealgo <command> -h lists its flags)")
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if commands[n].summary != "" {
			fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
		}
	}
	fmt.Fprintf(w, "  %-8s %s\n", "help", "list the commands")
}

// flags returns a flag set bound to the application's configuration.
func (a *App) flags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("zealgo "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&a.cfg.Root, "root", a.cfg.Root, "application directory holding api/, public/, task/")
	return fs
}

func (a *App) cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := a.flags("serve", stderr)
	fs.StringVar(&a.cfg.Addr, "addr", a.cfg.Addr, "address to listen on (default 127.0.0.1:8080, or :$PORT)")
	dataHelp := "data directory for session files, generated secrets and application data; a relative `DIR` is taken from the working directory"
	if a.cfg.DataDir == "" { // else flag shows the default the application set
		dataHelp += " (default <root>/data, i.e. ./data with the default root)"
	}
	fs.StringVar(&a.cfg.DataDir, "data", a.cfg.DataDir, dataHelp)
	var redisURL string
	redisHelp := "keep sessions in the Redis server at `URL`, e.g. redis://127.0.0.1:6379/0"
	if a.cfg.Session.Redis == "" && a.cfg.Session.Backend == nil {
		redisHelp += " (default $" + SessionRedisEnv + ", else files under the data directory)"
	}
	fs.StringVar(&redisURL, "session-redis", "", redisHelp)
	fs.IntVar(&a.cfg.TaskWorkerNum, "task-workers", a.cfg.TaskWorkerNum, "number of task worker processes")
	fs.BoolVar(&a.cfg.TaskEnableCoroutine, "task-coroutine", a.cfg.TaskEnableCoroutine, "run each task in its own goroutine")
	fs.BoolVar(&a.cfg.Dev, "dev", a.cfg.Dev, "development mode: show compile errors with source in pages")
	applyDB, applyNATS := a.dbFlag(fs), a.natsFlags(fs)
	a.opsFlags(fs) // flags_env.go
	a.superviseFlags(fs)
	a.edgeFlags(fs) // --max-body, --body-timeout, --write-timeout, --trusted-origins, --trusted-proxies, --frame-ancestors
	if err := a.parseFlags(fs, args); err != nil {
		return 2
	}
	applyDB()
	applyNATS()
	// Set only when given: its default would show a URL set in code, and
	// its password, in the help text.
	redisSet := false
	fs.Visit(func(f *flag.Flag) { redisSet = redisSet || f.Name == "session-redis" })
	if redisSet {
		if a.cfg.Session.Backend != nil {
			fmt.Fprintln(stderr, "zealgo: --session-redis: this application keeps sessions in a store of its own (Config.Session.Backend)")
			return 2
		}
		a.cfg.Session.Redis = redisURL
	}
	if a.cfg.Logger == nil {
		logs, err := a.newServeLogs(stderr) // accesslog.go
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		defer logs.Close()
		a.cfg.Logger = logs.Main
		if a.cfg.Ops.AccessLogger == nil {
			a.cfg.Ops.AccessLogger = logs.Bulk
		}
	}
	defer a.logAsDefault()() // slog in handler files writes through the same log
	// In-process, or as the supervisor of a child that is this program
	// with the same arguments and environment (supervise.go).
	return a.serveCommand(ctx, args, stdout, stderr)
}

func (a *App) cmdRoutes(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := a.flags("routes", stderr)
	if err := a.parseFlags(fs, args); err != nil {
		return 2
	}
	routes, err := a.Routes()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "URL\tMETHODS\tFILE\tNOTE")
	for _, r := range routes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.URL, r.Methods, r.File, r.Note)
	}
	tw.Flush()
	return 0
}

// prepare resolves the application's directories; it does not start anything.
func (a *App) prepare() error {
	if a.dirs.root != "" {
		return nil
	}
	a.log = a.Logger()
	root, err := filepath.Abs(a.cfg.Root)
	if err != nil {
		return fmt.Errorf("zealgo: root: %w", err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("zealgo: root %s: %w", a.cfg.Root, err)
	}
	a.dirs = appDirs{root: real, api: filepath.Join(real, "api"), public: filepath.Join(real, "public"),
		task: filepath.Join(real, "task"), template: filepath.Join(real, "template")}
	if a.cfg.DataDir == "" {
		a.cfg.DataDir = filepath.Join(real, "data")
	}
	if a.dirs.module, err = interp.FindModule(real); err != nil {
		return fmt.Errorf("zealgo: root %s: %w", a.cfg.Root, err)
	}
	return a.useEmbedded() // zealgo build --embed (embed.go)
}

// Route is one endpoint or page, as Routes lists it.
type Route struct {
	URL     string // e.g. /api/device/list
	Methods string // the Allow list
	File    string // relative to the root
	Note    string // mode, or the problem that keeps the file from loading
}

// Routes compiles every handler and page file and lists what it serves.
func (a *App) Routes() ([]Route, error) {
	if err := a.prepare(); err != nil {
		return nil, err
	}
	var out []Route
	for _, d := range []struct{ dir, prefix string }{{a.dirs.api, "/api/"}, {a.dirs.public, "/"}} {
		files, err := goFiles(d.dir)
		if err != nil {
			return nil, err
		}
		for _, path := range files {
			rel, _ := filepath.Rel(d.dir, path)
			url := d.prefix + routeURL(strings.TrimSuffix(filepath.ToSlash(rel), ".go")) // {slug}, {path...}
			if d.prefix == "/" {
				url = pageURL(url)
			}
			r := Route{URL: url, File: a.rel(path)}
			prog, _, err := a.compile(d.dir, path)
			var f *handlerFile
			if err == nil {
				f, err = a.analyze(prog, r.File)
			}
			if err != nil {
				r.Methods, r.Note = "-", firstLine(err.Error())
			} else {
				r.Methods = f.allow
				r.Note = "mode 2 (per method)"
				if f.all != nil {
					r.Note = "mode 1 (" + f.all.name + ")"
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// pageURL turns "/admin/index" into "/admin/" and "/index" into "/".
func pageURL(u string) string {
	if u == "/index" {
		return "/"
	}
	if s, ok := strings.CutSuffix(u, "/index"); ok {
		return s + "/"
	}
	return u
}

// goFiles lists the .go files below dir, sorted, as zealgo build
// compiles them; none if dir is missing.
var goFiles = buildgen.GoFiles

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
