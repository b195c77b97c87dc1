package bench_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fakeWrk stands for wrk in TestTierRounds: it appends the port it was
// run on to $WRK_LOG and prints wrk's lines that tier_wrk reads, its
// requests/s a base by port (31: tiered 900, 32: built 1000, 33: interp
// 500) times a factor that rises by 4 % a run, as a load that changes
// during the rounds moves every server's figures alike.
const fakeWrk = `#!/bin/sh
for a; do url=$a; done
port=${url#http://127.0.0.1:}
port=${port%%/*}
echo "$port" >>"$WRK_LOG"
n=$(wc -l <"$WRK_LOG")
case $port in 31) base=900 ;; 32) base=1000 ;; *) base=500 ;; esac
rps=$(awk -v b=$base -v n=$n 'BEGIN { printf "%.0f", b * (1 + 0.04 * n) }')
echo "  $rps requests in 1.00s, 1.00MB read"
echo "Requests/sec: $rps"
`

// TestTierRounds runs bench/tier.sh's rounds against a fake wrk: after a
// warm-up round, each round runs each endpoint on the servers in a
// mirrored order (tiered built interp interp built tiered, built and
// tiered swapped every other round), so that the k-th runs of tiered and
// built are next to each other; and the table gives the median of the
// pairs' ratios, close to the true 0.9 though the load rose by 4 % a run,
// with their lowest and highest.
func TestTierRounds(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wrk"), []byte(fakeWrk), 0o755); err != nil {
		t.Fatal(err)
	}
	script := `set -euo pipefail
log() { :; }
die() { echo "$*" >&2; exit 1; }
THREADS=2 CONNS=50 WORK=` + dir + `
. ./tier.sh
declare -gA TIER_RUN=() TIER_PID=([tiered]=$$ [built]=$$ [interp]=$$) TIER_PORT=([tiered]=31 [built]=32 [interp]=33)
TIER_ROUNDS=2
tier_rounds
echo "get $(tier_median get-tiered 1 get-built)"
echo "db $(tier_median db-tiered 1 db-built)"
echo "interp $(tier_median db-interp 1 db-built)"
echo "self $(tier_median db-built 1 db-built)"
echo "loads ${TIER_LOADS-}"
`
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "WRK_LOG="+filepath.Join(dir, "wrk.log"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tier_rounds: %v\n%s", err, out)
	}
	ports, err := os.ReadFile(filepath.Join(dir, "wrk.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := "31 32 33 31 32 33 " + // the warm-up round: get, then db
		"31 32 33 33 32 31 31 32 33 33 32 31 " + // round 1: get, then db
		"32 31 33 33 31 32 32 31 33 33 31 32 " // round 2: built and tiered swapped
	if got := strings.Join(strings.Fields(string(ports)), " ") + " "; got != want {
		t.Errorf("the runs' order:\n got %s\nwant %s", got, want)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, " ")
		lines[k] = v
	}
	ratio := regexp.MustCompile(`^([0-9.]+) \[([0-9.]+)–([0-9.]+)\]$`)
	for _, k := range []string{"get", "db"} {
		m := ratio.FindStringSubmatch(lines[k])
		if m == nil {
			t.Fatalf("%s: tiered ÷ built is %q, want a median and [min–max]", k, lines[k])
		}
		med, _ := strconv.ParseFloat(m[1], 64)
		lo, _ := strconv.ParseFloat(m[2], 64)
		hi, _ := strconv.ParseFloat(m[3], 64)
		if med < 0.88 || med > 0.92 || lo > med || hi < med || hi-lo < 0.01 {
			t.Errorf("%s: tiered ÷ built is %s, want a median within 0.88–0.92 of pairs that spread", k, lines[k])
		}
	}
	if m := ratio.FindStringSubmatch(lines["interp"]); m == nil {
		t.Errorf("interp ÷ built is %q, want a median and [min–max]", lines["interp"])
	}
	if lines["self"] != "1.000" {
		t.Errorf("built ÷ built is %q, want 1.000", lines["self"])
	}
	if n := len(strings.Fields(lines["loads"])); n != 2 {
		t.Errorf("loads at the rounds' starts: %q, want one a round", lines["loads"])
	}
}
