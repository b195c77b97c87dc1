#!/usr/bin/env bash
# bench/pinned.sh — servers' CPU per request, each server alone on one core
# and wrk on another, so that a few percent of difference shows through the
# noise of a shared machine (bench/run.sh lets wrk and the server share the
# cores, as a user's machine would; its ratios move ±0.03 from run to run).
# Each command is started pinned to CPU 0 with {port} replaced by a free
# port; every round loads each server in turn (the order rotated each
# round) with wrk pinned to CPU 1, and reads the server's CPU time from
# /proc/PID/stat around it. Prints, per server, the median requests/s, its
# ratio to the first server's, and the median server CPU per request.
#
#   go build -o /tmp/ref ./bench/cmd/ref
#   go run ./bench/cmd/zbench build --root bench/app -o /tmp/zbench-built
#   bench/pinned.sh '/tmp/ref --addr 127.0.0.1:{port} --root bench/app' \
#       '/tmp/zbench-built serve --root bench/app --addr 127.0.0.1:{port} --nats off --supervise=false --data /tmp/zb-data'
#   ROUNDS=10 DURATION=2 URLPATH='/api/hello' bench/pinned.sh CMD...
#
# Every server listens on 127.0.0.1 only and is stopped by its PID.
set -euo pipefail

ROUNDS=${ROUNDS:-8}
DURATION=${DURATION:-2}        # seconds per wrk run
URLPATH=${URLPATH:-/api/php/get?a=1&b=two}
CONNS=${CONNS:-50}

die() { echo "pinned: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "give one command per server, with {port} where its port goes"
command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
command -v taskset >/dev/null || die "taskset is not installed (util-linux)"
[ "$(nproc)" -ge 2 ] || die "needs two cores: one for the server, one for wrk"

# shellcheck source=bench/ports.sh
. "$(dirname "$0")/ports.sh" # free_port
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)
OUT=$(mktemp)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -f "$OUT"
}
trap cleanup EXIT

PORTS=()
for cmd in "$@"; do
	port=$(free_port)
	# shellcheck disable=SC2086 # the command is split as the shell would
	taskset -c 0 ${cmd//\{port\}/$port} >/dev/null 2>&1 &
	PIDS+=($!)
	PORTS+=("$port")
done
n=$#
for ((i = 0; i < n; i++)); do
	for _ in $(seq 50); do
		curl -fs -o /dev/null "http://127.0.0.1:${PORTS[$i]}$URLPATH" && continue 2
		sleep 0.1
	done
	j=$((i + 1))
	die "server $i does not answer $URLPATH: ${!j}"
done

for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k < n; k++)); do
		i=$(((k + r) % n))
		t0=$(cpu_ticks "${PIDS[$i]}")
		res=$(taskset -c 1 wrk -t2 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:${PORTS[$i]}$URLPATH")
		t1=$(cpu_ticks "${PIDS[$i]}")
		reqs=$(echo "$res" | grep -oE '[0-9]+ requests in' | cut -d' ' -f1)
		rps=$(echo "$res" | awk '/Requests\/sec/ {print $2}')
		echo "$i $rps $(awk -v t=$((t1 - t0)) -v hz="$TICK" -v n="$reqs" 'BEGIN {printf "%.2f", t / hz * 1e6 / n}')" >>"$OUT"
	done
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
base=$(awk '$1 == 0 {print $2}' "$OUT" | median)
printf '%-4s %12s %8s %16s  %s\n' server 'requests/s' ratio 'CPU µs/request' command
for ((i = 0; i < n; i++)); do
	rps=$(awk -v i=$i '$1 == i {print $2}' "$OUT" | median)
	cpu=$(awk -v i=$i '$1 == i {print $3}' "$OUT" | median)
	j=$((i + 1))
	printf '%-4s %12.0f %8.3f %16s  %s\n' "$i" "$rps" "$(awk -v a="$rps" -v b="$base" 'BEGIN {print a / b}')" "$cpu" "${!j}"
done
