#!/usr/bin/env bash
# bench/run.sh — zealgo against its references, measured side by side in one
# run. Writes bench/RESULTS.md. See bench/README.md.
#
#   bench/run.sh                     # defaults: 10s per load run, 50 connections, 2 rounds
#   DURATION=5s ROUNDS=1 bench/run.sh
#
# Every server listens on 127.0.0.1 only, on a free port, and is stopped by
# its PID when the script ends.
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$(pwd)
DURATION=${DURATION:-10s}   # per measured wrk run
WARMUP=${WARMUP:-2s}        # per server and URL, before the measured runs
CONNS=${CONNS:-50}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-2}         # alternating rounds; the best round of each row is reported
EDITS=${EDITS:-50}
SIZES=${SIZES:-10,100,1000}
CAP=${CAP:-100}
OPS_ROUNDS=${OPS_ROUNDS:-8}       # pairs of runs, operations off and on
OPS_DURATION=${OPS_DURATION:-5s}  # per run of a pair
OUT=${OUT:-$REPO/bench/RESULTS.md}

log() { printf '[bench] %s\n' "$*" >&2; }

if ! command -v wrk >/dev/null 2>&1; then
	log "installing wrk"
	if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk
	else sudo apt-get update -qq && sudo apt-get install -y -qq wrk; fi
fi

WORK=$(mktemp -d /tmp/zealgo-bench.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

CMDS=()   # the exact commands, for RESULTS.md
note_cmd() { CMDS+=("$*"); }

free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

wait_port() { # port
	for _ in $(seq 1 500); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.02
	done
	log "nothing listens on port $1"; return 1
}

http_get() { # port path -> body (HTTP/1.0 over bash's /dev/tcp, no curl needed)
	local resp
	exec 3<>"/dev/tcp/127.0.0.1/$1"
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
	resp=$(cat <&3)
	exec 3<&-
	printf '%s' "${resp#*$'\r\n\r\n'}"
}

http_status() { # port path -> status code
	local line
	exec 3<>"/dev/tcp/127.0.0.1/$1"
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
	read -r _ line _ <&3 || true
	cat <&3 >/dev/null
	exec 3<&-
	echo "$line"
}

ratio3() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }

to_ms() { # wrk latency like 512.00us, 1.20ms, 2.01s -> milliseconds
	awk -v v="$1" 'BEGIN {
		n = v + 0
		if (v ~ /us$/) n = n / 1000
		else if (v ~ /ms$/) n = n
		else if (v ~ /s$/) n = n * 1000
		printf "%.2f", n }'
}

# --- build -----------------------------------------------------------------
log "building into $WORK/bin"
mkdir -p "$WORK/bin"
for c in zbench ref reload treescale sharedpkg; do
	go build -o "$WORK/bin/$c" "./bench/cmd/$c"
done
note_cmd "go build -o \$BIN/<cmd> ./bench/cmd/<cmd>   # zbench ref reload treescale sharedpkg"

# --- application root ----------------------------------------------------------
ROOT=$WORK/root
cp -r bench/app "$ROOT"
mkdir -p "$ROOT/public"
# A 4 KiB static file, the same bytes every run.
awk 'BEGIN { for (i = 0; i < 4096; i++) printf "%c", (i % 64 == 63) ? 10 : 97 + i % 26 }' >"$ROOT/public/file4k.txt"

# --- servers ------------------------------------------------------------------
ZPORT=$(free_port)
"$WORK/bin/zbench" serve --root "$ROOT" --addr "127.0.0.1:$ZPORT" --task-workers 2 --nats off >"$WORK/zbench.log" 2>&1 &
ZPID=$!; PIDS+=("$ZPID")
note_cmd "zbench serve --root \$ROOT --addr 127.0.0.1:\$ZPORT --task-workers 2 --nats off"
# The same server with operations on: Prometheus metrics on their own
# listener and the access log, JSON, to a file (scenario 1, last row).
OPORT=$(free_port)
OMPORT=$(free_port)
"$WORK/bin/zbench" serve --root "$ROOT" --addr "127.0.0.1:$OPORT" --task-workers 2 --nats off --data "$WORK/ops-data" \
	--metrics-addr "127.0.0.1:$OMPORT" --access-log --log-format json >"$WORK/zbench-ops.log" 2>&1 &
OPID=$!; PIDS+=("$OPID")
note_cmd "zbench serve --root \$ROOT --addr 127.0.0.1:\$OPORT --task-workers 2 --nats off --data \$OPS_DATA --metrics-addr 127.0.0.1:\$OMPORT --access-log --log-format json 2>zbench-ops.log"
# The same server with tasks on NATS JetStream (the embedded server, serve's default), for scenario 6.
JPORT=$(free_port)
"$WORK/bin/zbench" serve --root "$ROOT" --addr "127.0.0.1:$JPORT" --data "$WORK/data-js" --task-workers 2 >"$WORK/zbench-js.log" 2>&1 &
JPID=$!; PIDS+=("$JPID")
note_cmd "zbench serve --root \$ROOT --addr 127.0.0.1:\$JPORT --data \$WORK/data-js --task-workers 2   # NATS JetStream, embedded"
RPORT=$(free_port)
"$WORK/bin/ref" --addr "127.0.0.1:$RPORT" --root "$ROOT" >"$WORK/ref.log" 2>&1 &
RPID=$!; PIDS+=("$RPID")
note_cmd "ref --addr 127.0.0.1:\$RPORT --root \$ROOT"
wait_port "$ZPORT"
wait_port "$OPORT"
wait_port "$RPORT"
wait_port "$JPORT"
log "zealgo pid $ZPID port $ZPORT, reference pid $RPID port $RPORT"

DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
NPROC=$(nproc)
UPTIME_BEFORE=$(uptime)

# --- load runs -------------------------------------------------------------------
# Rows: id|scenario|server|port|path|reference-row-id|conns
ROWS=(
	"get-ref|1. JSON /api/php/get?a=1&b=two|bare Echo, handler compiled (reference)|$RPORT|/api/php/get?a=1&b=two||$CONNS"
	"get-z|1. JSON /api/php/get?a=1&b=two|zealgo, handler interpreted|$ZPORT|/api/php/get?a=1&b=two|get-ref|$CONNS"
	"get-ops|1. JSON /api/php/get?a=1&b=two|zealgo, handler interpreted, metrics and JSON access log on (ratio to the row above it)|$OPORT|/api/php/get?a=1&b=two|get-z|$CONNS"
	"get-h|1. JSON /api/php/get?a=1&b=two|zealgo, body in a compiled helper (the floor: framework + one interpreted call)|$ZPORT|/api/bench/gethelper?a=1&b=two|get-ref|$CONNS"
	"work-ref|2. build + JSON-encode 100 records|bare Echo, compiled (reference)|$RPORT|/api/bench/work||$CONNS"
	"work-z|2. build + JSON-encode 100 records|zealgo, loop interpreted|$ZPORT|/api/bench/work|work-ref|$CONNS"
	"work-h|2. build + JSON-encode 100 records|zealgo, loop in a compiled helper (Provide)|$ZPORT|/api/bench/helper|work-ref|$CONNS"
	"static-ref|3. static 4 KiB file|bare Echo static (reference)|$RPORT|/file4k.txt||$CONNS"
	"static-z|3. static 4 KiB file|zealgo public/|$ZPORT|/file4k.txt|static-ref|$CONNS"
)
STATIC_STATUS=$(http_status "$ZPORT" /file4k.txt)
if [ "$STATIC_STATUS" != 200 ]; then
	log "zealgo does not serve public/file4k.txt (status $STATIC_STATUS): static scenario skipped"
	ROWS=("${ROWS[@]:0:7}")
fi

declare -A RPS P50 P99 ERRS RAW
wrk_once() { # id port path conns duration -> sets RPS etc. when better
	local id=$1 port=$2 path=$3 conns=$4 dur=$5 out rps p50 p99 errs
	out=$(wrk -t"$THREADS" -c"$conns" -d"$dur" --latency "http://127.0.0.1:$port$path")
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	p50=$(to_ms "$(awk '$1 == "50%" {print $2}' <<<"$out")")
	p99=$(to_ms "$(awk '$1 == "99%" {print $2}' <<<"$out")")
	errs=$(awk '/Non-2xx or 3xx responses:/ {n += $NF} /Socket errors:/ {gsub(",", ""); n += $4 + $6 + $8 + $10} END {print n + 0}' <<<"$out")
	RAW[$id]+="$rps req/s, p50 $p50 ms, p99 $p99 ms, errors $errs; "
	if [ -z "${RPS[$id]:-}" ] || awk -v a="$rps" -v b="${RPS[$id]}" 'BEGIN {exit !(a > b)}'; then
		RPS[$id]=$rps; P50[$id]=$p50; P99[$id]=$p99; ERRS[$id]=$errs
	fi
}

log "warming up"
for row in "${ROWS[@]}"; do
	IFS='|' read -r id _ _ port path _ conns <<<"$row"
	wrk -t1 -c10 -d"$WARMUP" "http://127.0.0.1:$port$path" >/dev/null
done
note_cmd "wrk -t1 -c10 -d$WARMUP <url>   # warm-up, once per row"
for round in $(seq 1 "$ROUNDS"); do
	for row in "${ROWS[@]}"; do
		IFS='|' read -r id _ server port path _ conns <<<"$row"
		log "round $round: $id ($server) http://127.0.0.1:$port$path"
		wrk_once "$id" "$port" "$path" "$conns" "$DURATION"
	done
done
note_cmd "wrk -t$THREADS -c$CONNS -d$DURATION --latency http://127.0.0.1:<port><path>   # each row, $ROUNDS alternating rounds"

# --- 1 with operations on: pairs of short runs ----------------------------------
# The same server with operations off and on, in back-to-back pairs whose
# order swaps every round, so that a change of the machine's load touches
# both runs of a pair alike; the median of the pairs' ratios is reported.
# Besides requests/s, each run reads the CPU time the server process used
# (/proc/<pid>/stat, with its children's): CPU per request is the cost operations add, and
# depends far less on what else the machine runs than requests/s do.
OPS_RATIOS=() OPS_CPU_RATIOS=() OPS_CPU=()
HZ=$(getconf CLK_TCK)
# The server runs under serve's supervisor: count the supervisor and its
# children (the serving process); task workers, idle here, are left out.
cpu_ticks() { awk -v p="$1" '$1 == p || $4 == p {t += $14 + $15} END {print t}' /proc/[0-9]*/stat 2>/dev/null; }
ops_run() { # port pid -> "requests/s cpu-microseconds-per-request"
	local t0 t1 out
	t0=$(cpu_ticks "$2")
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$OPS_DURATION" "http://127.0.0.1:$1/api/php/get?a=1&b=two")
	t1=$(cpu_ticks "$2")
	awk -v t=$((t1 - t0)) -v hz="$HZ" '/requests in/ {n = $1} /^Requests\/sec:/ {rps = $2}
		END {printf "%s %.2f", rps, t / hz * 1e6 / n}' <<<"$out"
}
median() { sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for round in $(seq 1 "$OPS_ROUNDS"); do
	log "operations pair $round of $OPS_ROUNDS"
	if [ $((round % 2)) = 1 ]; then off=$(ops_run "$ZPORT" "$ZPID"); on=$(ops_run "$OPORT" "$OPID")
	else on=$(ops_run "$OPORT" "$OPID"); off=$(ops_run "$ZPORT" "$ZPID"); fi
	read -r off_rps off_cpu <<<"$off"
	read -r on_rps on_cpu <<<"$on"
	OPS_RATIOS+=("$(ratio3 "$on_rps" "$off_rps")")
	OPS_CPU_RATIOS+=("$(ratio3 "$on_cpu" "$off_cpu")")
	OPS_CPU+=("$off_cpu/$on_cpu")
done
OPS_MEDIAN=$(printf '%s\n' "${OPS_RATIOS[@]}" | median)
OPS_CPU_MEDIAN=$(printf '%s\n' "${OPS_CPU_RATIOS[@]}" | median)
note_cmd "wrk -t$THREADS -c$CONNS -d$OPS_DURATION http://127.0.0.1:<port>/api/php/get?a=1&b=two   # $OPS_ROUNDS pairs, operations off and on, order swapped each round"

# --- 6. tasks ---------------------------------------------------------------------
# The local pool (--nats off) and NATS JetStream side by side, in alternating rounds.
TASK_NOTE=""
TASK_STATUS=$(http_status "$ZPORT" /api/bench/task)
JS_STATUS=$(http_status "$JPORT" /api/bench/task)
declare -A BURST
if [ "$TASK_STATUS" = 200 ] && [ "$JS_STATUS" = 200 ]; then
	log "tasks: round trip and burst, local pool and JetStream"
	for port in "$ZPORT" "$JPORT"; do
		wrk -t1 -c8 -d"$WARMUP" "http://127.0.0.1:$port/api/bench/task" >/dev/null
	done
	for round in $(seq 1 "$ROUNDS"); do
		wrk_once task-rt "$ZPORT" /api/bench/task 8 "$DURATION"
		wrk_once task-rt-js "$JPORT" /api/bench/task 8 "$DURATION"
	done
	note_cmd "wrk -t$THREADS -c8 -d$DURATION --latency http://127.0.0.1:<port>/api/bench/task   # \$ZPORT and \$JPORT, $ROUNDS alternating rounds"
	BURST[local]=$(http_get "$ZPORT" '/api/bench/taskburst?n=5000')
	BURST[js]=$(http_get "$JPORT" '/api/bench/taskburst?n=5000')
	note_cmd "GET http://127.0.0.1:<port>/api/bench/taskburst?n=5000   # \$ZPORT, then \$JPORT"
else
	TASK_NOTE="skipped: /api/bench/task answered $TASK_STATUS (local pool) and $JS_STATUS (JetStream) (tasks not available in this build)"
	log "tasks $TASK_NOTE"
fi
kill "$JPID"
wait "$JPID" 2>/dev/null || true

# --- 4. hot reload ---------------------------------------------------------------
log "hot reload: $EDITS edits under load"
RELOAD=$("$WORK/bin/reload" -url "http://127.0.0.1:$ZPORT" -root "$ROOT" -edits "$EDITS" -load 8)
note_cmd "reload -url http://127.0.0.1:\$ZPORT -root \$ROOT -edits $EDITS -load 8"

ACCESS_LINES=$(grep -c '"msg":"request"' "$WORK/zbench-ops.log" || true)
METRIC_COUNT=$(http_get "$OMPORT" /metrics | awk '/^zealgo_http_requests_total\{.*handler="api\/php\/get.go"/ {n += $NF} END {printf "%d", n}')
kill "$ZPID" "$RPID" "$OPID"
wait "$ZPID" 2>/dev/null || true
wait "$RPID" 2>/dev/null || true
wait "$OPID" 2>/dev/null || true

# --- 5. tree scale --------------------------------------------------------------------
log "tree scale: $SIZES files, cap $CAP"
TREE=$("$WORK/bin/treescale" -bin "$WORK/bin/zbench" -sizes "$SIZES" -cap "$CAP")
note_cmd "treescale -bin \$BIN/zbench -sizes $SIZES -cap $CAP"

# --- 7. shared package ----------------------------------------------------------------
log "shared package: 100 handler files with and without a 300-line package"
SHARED=$("$WORK/bin/sharedpkg" -bin "$WORK/bin/zbench" -files 100 -lines 300)
note_cmd "sharedpkg -bin \$BIN/zbench -files 100 -lines 300"

# --- Go benchmarks and profile ------------------------------------------------------
log "go benchmarks"
go test -c -o "$WORK/host.test" ./host
GOBENCH=$(cd host && "$WORK/host.test" -test.run '^$' -test.bench 'BenchmarkDispatch' -test.benchmem -test.benchtime 1s 2>&1 | grep -E '^Benchmark|^cpu:')
note_cmd "go test ./host -run '^\$' -bench BenchmarkDispatch -benchmem -benchtime 1s"
OPSBENCH=""
for round in $(seq 1 3); do # interleaved: off, on, off, on, ...
	for cfg in off on; do
		OPSBENCH+=$(cd host && "$WORK/host.test" -test.run '^$' -test.bench "BenchmarkOps/$cfg\$" -test.benchmem -test.benchtime 1s 2>&1 | grep -E '^Benchmark')$'\n'
	done
done
note_cmd "go test ./host -run '^\$' -bench 'BenchmarkOps/(off|on)\$' -benchmem -benchtime 1s   # 3 rounds, off and on alternating"
(cd host && "$WORK/host.test" -test.run '^$' -test.bench 'BenchmarkDispatch/get/zealgo' -test.benchtime 3s \
	-test.cpuprofile "$WORK/cpu.out" >/dev/null 2>&1)
PROFILE=$(go tool pprof -top -cum -nodecount 70 "$WORK/host.test" "$WORK/cpu.out" 2>/dev/null |
	grep -E 'zealgo/host|yaegi/interp\.(getFunc|runCfg)|encoding/json\.Marshal|net/url\.ParseQuery|crypto/rand|context\.WithValue' | head -25)
note_cmd "go test ./host -run '^\$' -bench 'BenchmarkDispatch/get/zealgo' -benchtime 3s -cpuprofile cpu.out && go tool pprof -top -cum host.test cpu.out"
UPTIME_AFTER=$(uptime)

# --- RESULTS.md ---------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
{
	echo "# zealgo benchmark results"
	echo
	echo "Written by \`bench/run.sh\` — do not edit by hand; run it again."
	echo
	echo "| | |"
	echo "|---|---|"
	echo "| date | $DATE |"
	echo "| machine | \`nproc\` = $NPROC, $CPU |"
	echo "| load before | \`$UPTIME_BEFORE\` |"
	echo "| load after | \`$UPTIME_AFTER\` |"
	echo "| go | $(go version) |"
	echo "| commit | $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' + uncommitted changes') |"
	echo "| settings | DURATION=$DURATION WARMUP=$WARMUP CONNS=$CONNS THREADS=$THREADS ROUNDS=$ROUNDS EDITS=$EDITS SIZES=$SIZES CAP=$CAP OPS_ROUNDS=$OPS_ROUNDS OPS_DURATION=$OPS_DURATION |"
	echo
	echo "The machine is shared (other builds and tests may run meanwhile; see the load"
	echo "averages). wrk, the servers and anything else share the same $NPROC cores, so the"
	echo "absolute numbers are low and noisy; the ratios, measured in the same run with"
	echo "alternating rounds, are what matter. Each row reports the best of its $ROUNDS"
	echo "rounds; every round is listed under Raw runs."
	echo
	echo "## Load: requests/s, latency and ratio to the reference (scenarios 1–3)"
	echo
	echo "| scenario | server | requests/s | p50 | p99 | errors | ratio to reference |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for row in "${ROWS[@]}"; do
		IFS='|' read -r id scen server _ path ref conns <<<"$row"
		r="1.00 (reference)"
		[ -n "$ref" ] && r=$(ratio "${RPS[$id]}" "${RPS[$ref]}")
		echo "| $scen | $server \`$path\` | ${RPS[$id]} | ${P50[$id]} ms | ${P99[$id]} ms | ${ERRS[$id]} | $r |"
	done
	echo
	echo "Connections: $CONNS, wrk threads: $THREADS. Target of scenario 1: ratio ≥ 0.90."
	echo
	echo "Operations on (metrics on \`--metrics-addr\`, \`--access-log --log-format json\` to a"
	echo "file) against the same server with them off: target at most 5% slower. The"
	echo "best-of-rounds row above is at the mercy of the machine's load; the figures to"
	echo "read are the medians of $OPS_ROUNDS back-to-back pairs of $OPS_DURATION runs, their order"
	echo "swapped every round, and above all the server's CPU time per request (from"
	echo "\`/proc/<pid>/stat\`), which other processes on the machine disturb far less:"
	echo
	echo "| measure | each pair | median |"
	echo "|---|---|---:|"
	echo "| requests/s, on / off | ${OPS_RATIOS[*]} | $OPS_MEDIAN |"
	echo "| CPU µs per request, off / on | ${OPS_CPU[*]} | |"
	echo "| CPU per request, on / off | ${OPS_CPU_RATIOS[*]} | $OPS_CPU_MEDIAN |"
	echo
	echo "The server with operations on wrote $ACCESS_LINES access records, and its metrics"
	echo "counted $METRIC_COUNT requests of \`api/php/get.go\`: one of each per request."
	if [ "$STATIC_STATUS" != 200 ]; then
		echo
		echo "Scenario 3 skipped: zealgo answered $STATIC_STATUS for /file4k.txt (static serving not in this build)."
	fi
	echo
	echo "## 4. Hot reload"
	echo
	echo "Each edit rewrites \`api/bench/edit.go\` in place (truncate + write) while 8 clients"
	echo "request it and \`/api/php/get\` without pause; the time runs from the write to the"
	echo "first response showing the new version. Target: p99 ≤ 50 ms, 0 failed requests."
	echo
	echo "$RELOAD"
	echo
	echo "## 5. Scale of the handler tree"
	echo
	echo "Every file is a small distinct handler. Start is exec to the first answer (compile"
	echo "is lazy: nothing is compiled at start). RSS and heap are read after"
	echo "\`debug.FreeOSMemory\` (the memory probe is one more loaded file). The last row runs"
	echo "the largest tree with \`MaxLoadedFiles\` = $CAP (\`host.WithMaxLoadedFiles\`): the"
	echo "least recently used interpreters are unloaded and recompiled on demand."
	echo
	echo "$TREE"
	echo
	echo "## 6. Task dispatch"
	echo
	if [ -n "$TASK_NOTE" ]; then
		echo "$TASK_NOTE"
	else
		echo "2 task worker processes, on the local pool (\`--nats off\`: tasks over the workers'"
		echo "pipes, in memory) and on NATS JetStream (the server embedded by \`serve\`, file store;"
		echo "the workers pull from it), the same binary and application, in alternating rounds."
		echo "Round trip: a request dispatches one task (\`api.App().Server().Task\`) and waits for"
		echo "its result through the finish callback, 8 connections. Burst: 5000 tasks dispatched"
		echo "at once by one request and awaited."
		echo
		echo "| engine | round trips/s | p50 | p99 | errors | burst: tasks/s | burst: dispatch of 5000 |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		for e in local js; do
			id=task-rt; name="local pool"
			[ "$e" = js ] && id=task-rt-js && name="NATS JetStream"
			b=${BURST[$e]}
			ps=$(sed -n 's/.*"per_second":\([0-9.]*\).*/\1/p' <<<"$b" | awk '{printf "%.0f", $1}')
			dm=$(sed -n 's/.*"dispatch_ms":\([0-9.]*\).*/\1/p' <<<"$b")
			echo "| $name | ${RPS[$id]} | ${P50[$id]} ms | ${P99[$id]} ms | ${ERRS[$id]} | ${ps:--} | ${dm:--} ms |"
		done
		echo
		echo "Burst answers: local \`${BURST[local]}\`; JetStream \`${BURST[js]}\`"
	fi
	echo
	echo "## 7. A shared package imported by every handler"
	echo
	echo "100 small handler files, each requested once (compiled on demand), without and"
	echo "with an import of a 300-line package of the application (\`lib/shared\`, generated"
	echo "funcs with loops and string building). Each file's interpreter compiles its own"
	echo "copy of the package, so its size is paid per loaded file."
	echo
	echo "$SHARED"
	echo
	echo "## Go benchmarks: dispatcher vs bare Echo, in process"
	echo
	echo "Same handlers; \`echo\` is bare Echo with the handler compiled, \`zealgo\` the"
	echo "dispatcher with the handler interpreted. No network: the difference is the"
	echo "framework's and the interpreter's cost per request."
	echo
	echo '```'
	echo "$GOBENCH"
	echo '```'
	echo
	echo "## Go benchmark: operations off and on, in process"
	echo
	echo "Scenario 1 without the network, operations off and on (metrics and the JSON"
	echo "access log to a file, through the serve command's buffered log), 3 rounds"
	echo "alternating. In process a request costs a few microseconds, so the share of"
	echo "the access record (about 1 µs, mostly slog's JSON encoding) is larger here than"
	echo "under wrk, where the network and HTTP parsing are paid too."
	echo
	echo '```'
	printf '%s' "$OPSBENCH"
	echo '```'
	echo
	echo "## Profile of the interpreted path (\`BenchmarkDispatch/get/zealgo\`, cumulative)"
	echo
	echo '```'
	echo "$PROFILE"
	echo '```'
	echo
	echo "## Raw runs"
	echo
	for row in "${ROWS[@]}"; do
		IFS='|' read -r id _ server _ path _ _ <<<"$row"
		echo "- $server \`$path\`: ${RAW[$id]}"
	done
	[ -z "$TASK_NOTE" ] && echo "- task round trip, local pool: ${RAW[task-rt]}" &&
		echo "- task round trip, NATS JetStream: ${RAW[task-rt-js]}"
	echo
	echo "## Commands"
	echo
	echo '```'
	echo "bench/run.sh   # from the repository root; BIN=$WORK/bin style temp dir, ROOT=a copy of bench/app"
	for c in "${CMDS[@]}"; do echo "$c"; done
	echo '```'
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "wrote $OUT"
