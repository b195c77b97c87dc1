package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// The command line (the cli*.go files) is built on cobra: it configures
// an App and calls it; nothing outside these files calls into them.

// Main runs the command line of an application and exits with its status:
//
//	serve   answer HTTP requests (the default)
//	check   check every handler, page and task file and every template; exit 1 on problems
//	vet     run go vet's analyzers over every handler, page and task file
//	        (internal/vet); exit 1 on findings
//	routes  list the endpoints and pages with their methods
//	migrate run the .sql files under migrations/ that have not run (takes
//	        --data and --db as serve does)
//	tasks   list, inspect, retry or purge the tasks given up on NATS (the
//	        dead letters): zealgo tasks list|inspect ID|retry ID|purge ID|--all
//	nats    run the embedded NATS server alone (--addr, --data), for
//	        several instances on one machine
//	new     zealgo new DIR [--module PATH]: write a new application into a
//	        missing or empty DIR, with a go.mod requiring this zealgo (and
//	        replacing it with the source checkout it was built from, or
//	        $ZEALGO_SOURCE), then run go mod tidy there when go is on the PATH
//	build   zealgo build [-o FILE] [--embed] [--main PKG]: compile every
//	        handler, page and task file with the Go compiler into one
//	        binary whose main is this program's (internal/buildgen, compiled.go)
//	completion bash|zsh|fish|powershell: print the shell's completion script
//	help    list the commands; help COMMAND and COMMAND --help list its flags
//
// Every command but new takes --root DIR, the application directory (default ".");
// check and vet also take --json (their findings as one JSON object).
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
// Flags take two dashes or, as with Go's flag package, one (-root DIR);
// -h and -o are one-letter flags. A usage error (an unknown command or
// flag, a bad value) exits with status 2.
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

// cli is the command line of one App, for one run.
type cli struct {
	a              *App
	name           string // the program's name in help, usage lines and completion scripts
	stdout, stderr io.Writer
	args           []string // the arguments after the command's name: serve's supervised child gets them
	code           int      // the exit status of the command that ran
}

// commands returns the command tree: every command of the program is
// added here, and nowhere else. Cobra adds help and completion.
func (c *cli) commands() *cobra.Command {
	root := &cobra.Command{
		Use:   c.name,
		Short: "serve a directory of handler files",
		Long: "Every Go file under api/ is an HTTP endpoint and every page under public/ a page, with no route\n" +
			"registration, no recompile and no restart. Without a command, " + c.name + " serves (" + c.name + " serve).",
		SilenceErrors: true, // run prints them, with the usage
		SilenceUsage:  true,
	}
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddCommand(
		c.serveCmd(),   // cli_serve.go
		c.checkCmd(),   // cli_commands.go
		c.vetCmd(),     // cli_vet.go
		c.routesCmd(),  // cli_commands.go
		c.migrateCmd(), // cli_commands.go
		c.natsCmd(),    // cli_commands.go
		c.newCmd(),     // cli_new.go
		c.buildCmd(),   // cli_commands.go
		c.tasksCmd(),   // cli_tasks.go
		c.workerCmd(),  // cli_commands.go, hidden: a task worker, started by serve (task_worker.go)
	)
	for _, cmd := range root.Commands() {
		if cmd.Annotations[annotationNoEnv] == "" {
			envHelp(cmd) // cli_env.go
		}
	}
	return root
}

// command makes a command named by the first word of use, which runs
// run with its flags set from the command line, else from their
// environment variables (cli_env.go), and its positional arguments.
func (c *cli) command(use, short string, run func(cmd *cobra.Command, args []string) int) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  c.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Annotations[annotationNoEnv] == "" {
				if err := flagsFromEnv(cmd.Flags()); err != nil {
					return err
				}
			}
			c.code = run(cmd, args)
			return nil
		},
	}
}

// noArgs refuses positional arguments.
func (c *cli) noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("zealgo %s: unexpected arguments %s", cmd.Name(), strings.Join(args, " "))
	}
	return nil
}

// run parses args, runs the command they name (serve when the first is
// a flag, or when there is none) and returns its exit status: 2 on a
// usage error, which it prints with the usage.
func (c *cli) run(ctx context.Context, args []string) int {
	root := c.commands()
	if len(args) == 0 || (strings.HasPrefix(args[0], "-") && !isHelp(args[0])) {
		args = append([]string{"serve"}, args...)
	}
	if !strings.HasPrefix(args[0], cobra.ShellCompRequestCmd) { // completion requests keep the word being completed
		fs, n := root.Flags(), 0
		if sub, _, err := root.Find(args[:1]); err == nil && sub != root {
			fs, n = sub.Flags(), 1
		}
		args = append(args[:n:n], goStyleFlags(fs, args[n:])...) // cli_env.go
	}
	c.args = args[1:]
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		c.usageError(root, cmd, err)
		return 2
	}
	return c.code
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// usageError prints err and, unless it is an environment variable's
// error, how to use cmd: the commands when it is the root.
func (c *cli) usageError(root, cmd *cobra.Command, err error) {
	msg := err.Error()
	if !strings.HasPrefix(msg, "zealgo") {
		msg = "zealgo: " + msg
	}
	fmt.Fprintln(c.stderr, msg)
	var envErr *envError
	switch {
	case errors.As(err, &envErr):
	case cmd == nil || cmd == root:
		fmt.Fprintln(c.stderr)
		fmt.Fprint(c.stderr, root.UsageString())
	default:
		fmt.Fprintf(c.stderr, "usage: %s\n(%s --help lists its flags)\n", cmd.UseLine(), cmd.CommandPath())
	}
}
