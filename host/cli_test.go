package host_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// runCLI runs the command line args of a new App.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = host.New().Run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestCLIHelpListsCommands: zealgo help, --help, -h and -help list every
// command, help and completion included, each on one line with its
// summary, on stdout; the hidden worker command is not listed.
func TestCLIHelpListsCommands(t *testing.T) {
	for _, arg := range []string{"help", "--help", "-h", "-help"} {
		out, errOut, code := runCLI(t, arg)
		if code != 0 || errOut != "" {
			t.Fatalf("%s: exit %d, stderr %q", arg, code, errOut)
		}
		for _, cmd := range []string{"serve", "check", "routes", "migrate", "nats", "new", "build", "completion", "help"} {
			if !regexp.MustCompile(`(?m)^  ` + cmd + ` +\S.*$`).MatchString(out) {
				t.Errorf("%s: no line for %s:\n%s", arg, cmd, out)
			}
		}
		if strings.Contains(out, "worker") {
			t.Errorf("%s lists the hidden worker command:\n%s", arg, out)
		}
	}
}

// serveFlags are every flag of serve, with the environment variable its
// help names.
var serveFlags = []string{"root", "addr", "data", "session-redis", "task-workers", "task-coroutine", "dev", "db",
	"nats", "instance", "task-ack-wait", "task-max-deliver", "session-store", "health-path", "ready-path",
	"drain-delay", "metrics-addr", "pprof", "access-log", "log-format", "log-level", "supervise",
	"max-execution-time", "memory-limit", "tiered", "tier-settle", "gc-floor", "max-body", "body-timeout", "write-timeout",
	"allow-origin", "trusted-origins", "trusted-proxies", "frame-ancestors", "nats-replicas", "nats-cluster", "nats-cluster-addr",
	"nats-routes", "nats-sync", "nats-wait", "task-attempts", "task-backoff", "task-timeout", "task-queue-max",
	"task-max-inflight", "task-streams"}

// TestCLIServeHelpListsFlags: serve --help, and help serve, list every
// flag of serve with its environment variable, and exit 0.
func TestCLIServeHelpListsFlags(t *testing.T) {
	for _, args := range [][]string{{"serve", "--help"}, {"help", "serve"}, {"serve", "-help"}} {
		out, errOut, code := runCLI(t, args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		for _, f := range serveFlags {
			env := "ZEALGO_" + strings.ToUpper(strings.ReplaceAll(f, "-", "_"))
			line := regexp.MustCompile(`(?m)^ +--` + f + `\b.*\$` + env + `\b`)
			if !line.MatchString(out) {
				t.Errorf("%v: no line for --%s naming $%s", args, f, env)
			}
		}
		if n := len(regexp.MustCompile(`(?m)^ +(-[a-z], )?--[a-z]`).FindAllString(out, -1)); n != len(serveFlags)+1 { // and --help
			t.Errorf("%v: %d flags, want %d:\n%s", args, n, len(serveFlags)+1, out)
		}
	}
}

// TestCLICompletion: zealgo completion writes the completion script of
// each shell, and the program completes a flag's values itself.
func TestCLICompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "complete -o default -F __start_zealgo zealgo",
		"zsh":  "#compdef zealgo",
		"fish": "complete -c zealgo ",
	} {
		out, errOut, code := runCLI(t, "completion", shell)
		if code != 0 || errOut != "" || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, stderr %q, want a script with %q:\n%.300s", shell, code, errOut, want, out)
		}
	}
	// What the scripts run on a tab after serve --log-format:
	out, _, code := runCLI(t, "__complete", "serve", "--log-format", "")
	if code != 0 || !strings.HasPrefix(out, "text\njson\n:4\n") {
		t.Errorf("completing --log-format: exit %d:\n%s", code, out)
	}
	out, _, _ = runCLI(t, "__complete", "serve", "--task-w")
	if !strings.HasPrefix(out, "--task-workers\t") {
		t.Errorf("completing --task-w:\n%s", out)
	}
}

// checkTree is an application with one handler file that does not
// compile: check exits 1 and prints the problem as text or, with --json,
// as JSON.
var checkTree = map[string]string{"api/bad.go": "package api\n\nvar get = \n"}

// TestCLIFlagsFromEnvironment: a flag not on the command line comes from
// its ZEALGO_ variable, dashes as underscores; a flag on the command
// line wins over it; a bad value names the variable and exits 2.
func TestCLIFlagsFromEnvironment(t *testing.T) {
	root := testutil.WriteTree(t, checkTree)
	t.Setenv(host.SessionRedisEnv, "")
	t.Setenv(host.DBEnv, "")
	t.Setenv("ZEALGO_ROOT", root)
	t.Setenv("ZEALGO_JSON", "true")
	out, errOut, code := runCLI(t, "check")
	if code != 1 || !strings.HasPrefix(out, "{") || !strings.Contains(out, `"file": "api/bad.go"`) {
		t.Errorf("check with $ZEALGO_ROOT and $ZEALGO_JSON: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "check", "--json=false")
	if code != 1 || !strings.HasPrefix(out, "api/bad.go:") {
		t.Errorf("check --json=false over $ZEALGO_JSON: exit %d\n%s%s", code, out, errOut)
	}

	// A flag with a dash: its variable has an underscore.
	t.Setenv("ZEALGO_LOG_FORMAT", "yaml")
	if _, errOut, code := runCLI(t, "serve", "--data", t.TempDir()); code != 2 || !strings.Contains(errOut, `log format "yaml"`) {
		t.Errorf("serve with $ZEALGO_LOG_FORMAT=yaml: exit %d, %s", code, errOut)
	}
	// The flag wins: serve gets past the log format, to the next problem.
	_, errOut, code = runCLI(t, "serve", "--data", t.TempDir(), "--addr", testutil.FreeAddr(t), "--log-format", "text", "--pprof")
	if code == 0 || strings.Contains(errOut, "yaml") || !strings.Contains(errOut, "--metrics-addr") {
		t.Errorf("serve --log-format text over $ZEALGO_LOG_FORMAT=yaml: exit %d, %s", code, errOut)
	}
	t.Setenv("ZEALGO_LOG_FORMAT", "")

	t.Setenv("ZEALGO_MAX_BODY", "huge")
	t.Setenv("ZEALGO_MAX_EXECUTION_TIME", "soon")
	_, errOut, code = runCLI(t, "serve")
	if code != 2 || !strings.Contains(errOut, "zealgo: ZEALGO_MAX_BODY=huge: ") ||
		!strings.Contains(errOut, "zealgo: ZEALGO_MAX_EXECUTION_TIME=soon: ") || strings.Contains(errOut, "usage") {
		t.Errorf("bad variables: exit %d, %s", code, errOut)
	}
}

// TestCLIUsageErrors: an unknown flag or command, or arguments where a
// command takes none, exit 2 with the problem and the usage on stderr.
func TestCLIUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"serve", "--frobnicate"}, []string{"zealgo: unknown flag: --frobnicate\n", "usage: zealgo serve [flags]\n", "zealgo serve --help"}},
		{[]string{"check", "-frobnicate"}, []string{"zealgo: unknown flag: --frobnicate\n", "usage: zealgo check [flags]\n"}},
		{[]string{"--frobnicate"}, []string{"zealgo: unknown flag: --frobnicate\n", "usage: zealgo serve [flags]\n"}},
		{[]string{"routes", "--root"}, []string{"zealgo: flag needs an argument: --root\n"}},
		{[]string{"serve", "--task-workers", "many"}, []string{`invalid argument "many" for "--task-workers"`}},
		{[]string{"routes", "extra"}, []string{"zealgo routes: unexpected arguments extra\n"}},
		{[]string{"frobnicate"}, []string{`zealgo: unknown command "frobnicate" for "zealgo"`, "Available Commands:"}},
	} {
		out, errOut, code := runCLI(t, tc.args...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want 2 and none", tc.args, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, errOut)
			}
		}
	}
}

// TestCLIGoStyleFlags: flags with one dash, as Go's flag package takes
// them, work as with two: -root DIR, -json, -json=false.
func TestCLIGoStyleFlags(t *testing.T) {
	root := testutil.WriteTree(t, checkTree)
	if out, errOut, code := runCLI(t, "check", "-root", root, "-json"); code != 1 || !strings.HasPrefix(out, "{") {
		t.Errorf("check -root DIR -json: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, "check", "-json=false", "-root="+root); code != 1 || !strings.HasPrefix(out, "api/bad.go:") {
		t.Errorf("check -json=false -root=DIR: exit %d\n%s%s", code, out, errOut)
	}
	// The default command, serve, with a Go-style flag first.
	if _, errOut, code := runCLI(t, "-log-format", "yaml", "-data", t.TempDir()); code != 2 || !strings.Contains(errOut, `log format "yaml"`) {
		t.Errorf("-log-format yaml: exit %d, %s", code, errOut)
	}
}
