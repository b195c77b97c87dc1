package host

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagEnvPrefix begins the environment variable of every command-line
// flag: --metrics-addr can also be set by ZEALGO_METRICS_ADDR (upper
// case, dashes to underscores). A flag given on the command line wins
// over its variable.
const flagEnvPrefix = "ZEALGO_"

// envNote ends the help of a command whose flags have variables.
const envNote = "Every flag can also be set by the environment variable in brackets;\n" +
	"a flag on the command line wins over its variable."

// annotationNoEnv, set on a command, keeps its flags from environment
// variables (nats: its --addr and --data are not serve's).
const annotationNoEnv = "zealgo-no-env"

// flagEnv returns the environment variable of the flag name, e.g.
// ZEALGO_TASK_WORKERS for task-workers.
func flagEnv(name string) string {
	return flagEnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// envOwnFlags are the flags whose variable the application reads itself,
// after Config: a flag wins over Config, which wins over the variable
// (DBEnv, SessionRedisEnv, NATSEnv). flagsFromEnv does not set them from it.
var envOwnFlags = map[string]bool{"db": true, "session-redis": true, "nats": true}

// envError is a bad value in a flag's environment variable.
type envError struct{ errs []error }

func (e *envError) Error() string { return errors.Join(e.errs...).Error() }

// envHelp names each flag's variable in its help text, and says so in
// the command's.
func envHelp(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if env := flagEnv(f.Name); !strings.Contains(f.Usage, "$"+env) {
			f.Usage += " [$" + env + "]"
		}
	})
	if cmd.Long == "" {
		cmd.Long = cmd.Short
	}
	cmd.Long += "\n\n" + envNote
}

// flagsFromEnv sets every flag of fs not given on the command line from
// its environment variable, when that is set and not empty.
func flagsFromEnv(fs *pflag.FlagSet) error {
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		env := flagEnv(f.Name)
		v := os.Getenv(env)
		if f.Changed || envOwnFlags[f.Name] || f.Name == "help" || v == "" {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("zealgo: %s=%s: %w", env, v, err))
		}
	})
	if len(errs) > 0 {
		return &envError{errs}
	}
	return nil
}

// goStyleFlags rewrites the flags of args written as Go's flag package
// takes them, with one dash (-root DIR, -task-workers=2), into pflag's
// two (--root DIR), fs being the flags of the command they are given to.
// Left as they are: one-letter flags (-h, -o FILE), which are pflag's
// shorthands, a flag's value (--data -x), negative numbers, and
// everything after "--".
func goStyleFlags(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		arg := args[i]
		out = append(out, arg)
		if arg == "--" {
			return append(out, args[i+1:]...)
		}
		name, hasValue := flagName(arg)
		if name == "" {
			continue
		}
		if !strings.HasPrefix(arg, "--") && len(name) > 1 {
			out[len(out)-1] = "-" + arg
		}
		f := fs.Lookup(name)
		if len(name) == 1 {
			f = fs.ShorthandLookup(name)
		}
		if f != nil && f.NoOptDefVal == "" && !hasValue && i+1 < len(args) {
			i++
			out = append(out, args[i]) // its value
		}
	}
	return out
}

// flagName returns the name of the flag arg is (none if it is not one:
// "-", "-1", "DIR") and whether it holds its value (--addr=:80).
func flagName(arg string) (name string, hasValue bool) {
	name = strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
	if len(name) == len(arg) || name == "" || !isLetter(name[0]) {
		return "", false
	}
	name, _, hasValue = strings.Cut(name, "=")
	return name, hasValue
}

func isLetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }

// byteSize is a flag of a size in bytes: 1048576, 512K, 64M, 4G.
type byteSize int64

func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		s    string
		size int64
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	mult := int64(1)
	num := strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B")
	if i := len(num) - 1; i > 0 {
		switch num[i] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			num = num[:i]
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return fmt.Errorf("zealgo: %q is not a size such as 512M or 4G", s)
	}
	*b = byteSize(n * mult)
	return nil
}

// Type names the value in help: --memory-limit size.
func (b *byteSize) Type() string { return "size" }

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
