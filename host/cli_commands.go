package host

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/zealgo/zealgo/internal/buildgen"
	"github.com/zealgo/zealgo/internal/natsrv"
)

// NATSTokenEnv is the environment variable holding the token that the
// nats command's server wants from its clients (who then connect to
// nats://TOKEN@host:port); none when it is empty.
const NATSTokenEnv = "ZEALGO_NATS_TOKEN"

// checkCmd is zealgo check (check.go).
func (c *cli) checkCmd() *cobra.Command {
	var asJSON, strict bool
	tiered := true
	cmd := c.command("check", "check every handler, page and task file and every template; exit 1 on problems",
		func(*cobra.Command, []string) int { return c.check(asJSON, strict, tiered) })
	cmd.Long = "Check every handler, page and task file under api/, public/ and task/ against the symbols this program\n" +
		"links, with the interpreter's trap rules, and parse every template. Exit 1 on errors, 0 on warnings\n" +
		"alone (--strict: 1 on warnings too), 2 when the files cannot be read."
	c.rootFlag(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the problems as one JSON object, for editors and CI")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 on warnings too (constructs that run differently interpreted and built)")
	cmd.Flags().BoolVar(&tiered, "tiered", true, "a construct only compiled Go runs is no error in a module application with a Go toolchain: "+
		"tiered serve runs the file from its native build (false: an error, as for serve --tiered=false)")
	return cmd
}

func (c *cli) check(asJSON, strict, tiered bool) int {
	a := c.a
	if a.cfg.Logger == nil {
		a.cfg.Logger = slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	problems, n, err := checkAll(a)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 2
	}
	tiered = tiered && tierAvailable(a.dirs.root) == ""
	if asJSON {
		writeCheckJSON(c.stdout, problems, n, tiered)
	} else {
		for _, p := range problems {
			fmt.Fprintln(c.stdout, checkLine(p, tiered))
		}
	}
	return checkSummary(c.stderr, problems, n, strict, tiered)
}

// routesCmd is zealgo routes: App.Routes as a table.
func (c *cli) routesCmd() *cobra.Command {
	cmd := c.command("routes", "list the endpoints and pages with their methods", func(*cobra.Command, []string) int {
		routes, err := c.a.Routes()
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			return 1
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "URL\tMETHODS\tFILE\tNOTE")
		for _, r := range routes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.URL, r.Methods, r.File, r.Note)
		}
		tw.Flush()
		return 0
	})
	c.rootFlag(cmd)
	return cmd
}

// migrateCmd is zealgo migrate: the migrations under migrations/ that
// have not run, and nothing else started (db.go).
func (c *cli) migrateCmd() *cobra.Command {
	var applyDB func(*pflag.FlagSet)
	cmd := c.command("migrate", "run the database migrations under migrations/ that have not run", func(cmd *cobra.Command, _ []string) int {
		applyDB(cmd.Flags())
		return c.migrate(cmd)
	})
	c.rootFlag(cmd)
	c.dataFlag(cmd, "data directory, which holds the default SQLite database")
	applyDB = c.dbFlag(cmd.Flags())
	return cmd
}

func (c *cli) migrate(cmd *cobra.Command) int {
	a := c.a
	if a.cfg.Logger == nil {
		a.cfg.Logger = slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if err := a.prepare(); err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	var err error
	rt := rtOf(a)
	if rt.db, err = openDB(&a.cfg, a.Logger(), a.dirs.root, false); err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	defer rt.db.close()
	res, err := rt.db.migrate(cmd.Context())
	for _, f := range res.Applied {
		fmt.Fprintln(c.stdout, "applied", f)
	}
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	fmt.Fprintf(c.stderr, "zealgo migrate: %d applied, %d already run, on %s\n", len(res.Applied), res.Files-len(res.Applied), rt.db.src)
	return 0
}

// buildCmd is zealgo build: the application's handler, page and task
// files compiled by the Go compiler into one binary (internal/buildgen),
// whose main is this command's own main package unless --main names
// another, and which serves from the compiled registry (compiled.go).
func (c *cli) buildCmd() *cobra.Command {
	var o buildgen.Options
	cmd := c.command("build", "compile every handler, page and task file into one native binary", func(cmd *cobra.Command, _ []string) int {
		o.Root, o.Stderr, o.Progress = c.a.cfg.Root, c.stderr, c.stderr
		if f, ok := c.stderr.(*os.File); ok {
			fi, err := f.Stat()
			o.ProgressTerminal = err == nil && fi.Mode()&os.ModeCharDevice != 0
		}
		out, err := buildgen.Build(cmd.Context(), o)
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			return 1
		}
		fmt.Fprintf(c.stdout, "zealgo build: wrote %s\n", out)
		return 0
	})
	cmd.Long = "Compile every handler, page and task file with the Go compiler into one binary, whose main is this\n" +
		"program's (--main), and which serves the compiled files. The first build takes minutes on a cold cache."
	c.rootFlag(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&o.Out, "o", "o", "", "the binary to write (default <root>/<name of root>)")
	fs.StringVar(&o.Main, "main", mainPackage(), "import path of the main `package` to build (./x: x in the root's module)")
	fs.StringVar(&o.Dir, "dir", "", "directory of the generated program (default <root>/.zealgo/build)")
	fs.BoolVar(&o.Embed, "embed", false, "put the templates, static files and migrations in the binary")
	fs.BoolVar(&o.KeepGoing, "keep-going", false, "register a file that does not compile with its error instead of failing")
	_ = cmd.MarkFlagFilename("o")
	_ = cmd.MarkFlagDirname("dir")
	return cmd
}

// mainPackage returns the import path of this binary's main package:
// the application's own (github.com/zealgo/zealgo/sample for the sample),
// or zealgo's command.
func mainPackage() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" && !strings.HasSuffix(bi.Path, ".test") && bi.Path != "command-line-arguments" {
		return bi.Path
	}
	return "github.com/zealgo/zealgo/cmd/zealgo"
}

// natsCmd is zealgo nats: the NATS server that zealgo embeds, alone,
// until the command is stopped: several instances on one machine then
// share it with --nats nats://127.0.0.1:4222 (nats://TOKEN@... with
// $ZEALGO_NATS_TOKEN). Its flags have no variables: they are not serve's.
func (c *cli) natsCmd() *cobra.Command {
	var addr, data string
	cmd := c.command("nats", "run the embedded NATS server alone, for several instances on this machine", func(cmd *cobra.Command, _ []string) int {
		host, portStr, err := net.SplitHostPort(addr)
		port, perr := strconv.Atoi(portStr)
		if err != nil || perr != nil {
			fmt.Fprintf(c.stderr, "zealgo nats: --addr %q: want HOST:PORT\n", addr)
			return 2
		}
		log := c.a.cfg.Logger
		if log == nil {
			log = slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
		}
		dir, token := filepath.Join(data, "nats"), os.Getenv(NATSTokenEnv)
		srv, err := natsrv.Start(natsrv.Config{DataDir: dir, Host: host, Port: port, Token: token, Logger: log})
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			return 1
		}
		markCrash(&c.a.cfg, srv, token, log) // nats.go
		log.Info("zealgo nats serving", "url", srv.URL(), "data", dir, "token", token != "")
		<-cmd.Context().Done()
		srv.Shutdown()
		log.Info("zealgo nats stopped")
		return 0
	})
	cmd.Long = "Run the NATS server that serve embeds, alone, until stopped: several instances on this machine share it\n" +
		"with --nats nats://127.0.0.1:4222 (nats://TOKEN@127.0.0.1:4222 with $" + NATSTokenEnv + " set here)."
	cmd.Annotations = map[string]string{annotationNoEnv: "true"}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:4222", "loopback address to listen on")
	cmd.Flags().StringVar(&data, "data", "data", "data directory; the JetStream store goes under `DIR`/nats")
	_ = cmd.MarkFlagDirname("data")
	return cmd
}

// workerCmd is the hidden worker command: the server starts its own
// executable with it, and the process serves tasks over its standard
// input and output until the server tells it to stop or goes away
// (task_worker.go).
func (c *cli) workerCmd() *cobra.Command {
	cmd := c.command("worker", "serve tasks to the server that started this process", func(cmd *cobra.Command, _ []string) int {
		if c.stdout == io.Writer(os.Stdout) {
			// Standard output carries the protocol: keep stray prints off it.
			os.Stdout = os.Stderr
		}
		if err := serveWorker(cmd.Context(), c.a, os.Stdin, c.stdout, c.stderr); err != nil {
			fmt.Fprintln(c.stderr, err)
			return 1
		}
		return 0
	})
	cmd.Hidden = true
	cmd.Annotations = map[string]string{annotationNoEnv: "true"}
	cmd.Args = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return errors.New("zealgo worker: takes no arguments; the server starts it and configures it over standard input")
		}
		return nil
	}
	return cmd
}
