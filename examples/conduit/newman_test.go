package conduit_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// newmanTool returns newman ($NEWMAN, or /tmp/nm's as the README installs
// it) and RealWorld's Postman collection ($CONDUIT_POSTMAN, or the
// README's clone in /tmp/realworld), skipping the test when either is
// missing.
func newmanTool(t *testing.T) (string, string) {
	t.Helper()
	newman, coll := os.Getenv("NEWMAN"), os.Getenv("CONDUIT_POSTMAN")
	if newman == "" {
		newman = "/tmp/nm/node_modules/.bin/newman"
	}
	if coll == "" {
		coll = "/tmp/realworld/api/Conduit.postman_collection.json"
	}
	for _, p := range []string{newman, coll} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("RealWorld's newman suite needs %s (README: RealWorld's own suite): %v", p, err)
		}
	}
	return newman, coll
}

// runNewman runs RealWorld's suite against the API at base, as new users.
func runNewman(t *testing.T, newman, coll, base, what string) {
	t.Helper()
	u := fmt.Sprintf("u%d", time.Now().UnixNano())
	out, err := exec.Command(newman, "run", coll, "--delay-request", "1", "--global-var", "APIURL="+base,
		"--global-var", "USERNAME="+u, "--global-var", "EMAIL="+u+"@mail.com", "--global-var", "PASSWORD=password").CombinedOutput()
	if err != nil {
		t.Fatalf("newman on %s: %v\n%s", what, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "requests") || strings.Contains(line, "assertions") {
			t.Logf("newman on %s: %s", what, strings.Join(strings.Fields(line), " "))
		}
	}
}

// TestConduitNewman runs RealWorld's Postman suite with newman against the
// stock `zealgo serve`, tiered as by default, from a cold start (lib/auth,
// with jwt/v5 and bcrypt, interpreted), again once it has switched to its
// native build, and against the binary `zealgo build` makes.
func TestConduitNewman(t *testing.T) {
	newman, coll := newmanTool(t)
	base, logs := serveExample(t, zealgoCommand(t), "--tier-settle", "100ms")
	runNewman(t, newman, coll, base, "zealgo serve, interpreted")
	if strings.Contains(logs.String(), "serving a native build") {
		t.Log("the native build was in before the interpreted run ended")
	}
	testutil.WaitFor(t, 10*time.Minute, "the switch to the native build", func() bool {
		return strings.Contains(logs.String(), "zealgo tier: serving a native build")
	})
	runNewman(t, newman, coll, base, "zealgo serve, native build")
	built, _ := start(t, conduitBinary(t))
	runNewman(t, newman, coll, built, "zealgo build's binary")
}
