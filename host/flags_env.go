package host

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

// flagEnvPrefix begins the environment variable of every command-line
// flag: --metrics-addr can also be set by ZEALGO_METRICS_ADDR (upper
// case, dashes to underscores). A flag given on the command line wins
// over its variable.
const flagEnvPrefix = "ZEALGO_"

// flagEnv returns the environment variable of the flag name, e.g.
// ZEALGO_TASK_WORKERS for task-workers.
func flagEnv(name string) string {
	return flagEnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// envOwnFlags are the flags whose variable the application reads itself,
// after Config: a flag wins over Config, which wins over the variable
// (DBEnv, SessionRedisEnv, NATSEnv). parseFlags does not set them from it.
var envOwnFlags = map[string]bool{"db": true, "session-redis": true, "nats": true}

// parseFlags sets every flag of fs from its environment variable (when
// set and not empty), then parses args, whose flags win. The help text
// names each flag's variable.
func (a *App) parseFlags(fs *flag.FlagSet, args []string) error {
	if err := flagsFromEnv(fs); err != nil {
		return err
	}
	name := fs.Name()
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s [flags]\n\nEvery flag can also be set by the environment variable in brackets;\n"+
			"a flag on the command line wins over its variable.\n\n", name)
		fs.PrintDefaults()
	}
	return fs.Parse(args)
}

// flagsFromEnv sets every flag of fs from its environment variable, when
// set and not empty, and names the variable in the flag's help text.
func flagsFromEnv(fs *flag.FlagSet) error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		env := flagEnv(f.Name)
		if !strings.Contains(f.Usage, "$"+env) {
			f.Usage += " [$" + env + "]"
		}
		v := os.Getenv(env)
		if envOwnFlags[f.Name] || v == "" {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("zealgo: %s=%s: %w", env, v, err))
		}
	})
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(fs.Output(), err)
		return err
	}
	return nil
}

// opsFlags adds the flags of health checks, metrics, tracing and logging
// to the serve command.
func (a *App) opsFlags(fs *flag.FlagSet) {
	o := &a.cfg.Ops
	fs.StringVar(&o.HealthPath, "health-path", o.HealthPath, "`PATH` of the liveness check, answered before routing (empty: none)")
	fs.StringVar(&o.ReadyPath, "ready-path", o.ReadyPath, "`PATH` of the readiness check: database and task workers up, not shutting down (empty: none)")
	fs.DurationVar(&o.DrainDelay, "drain-delay", o.DrainDelay, "at shutdown, serve on this long with the readiness check failing before closing the listener")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr, "serve Prometheus metrics at http://`HOST:PORT`/metrics (default: no metrics)")
	fs.BoolVar(&o.Pprof, "pprof", o.Pprof, "serve net/http/pprof under /debug/pprof/ on the metrics address")
	fs.BoolVar(&o.AccessLog, "access-log", o.AccessLog, "log one record per request")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "log `FORMAT`: text or json (default text)")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "log `LEVEL`: debug, info, warn or error (default info, debug with --dev)")
}
