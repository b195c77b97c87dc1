#!/usr/bin/env bash
# bench/run.sh — zealgo against its references, measured side by side in one
# run: bare Echo with the handlers compiled, and what users would pick
# instead (Node's raw http server, nginx + PHP-FPM). Writes bench/RESULTS.md.
# See bench/README.md.
#
#   bench/run.sh                     # defaults: 10s per load run, 50 connections, 2 rounds
#   DURATION=5s ROUNDS=1 bench/run.sh
#   DURATION=1s WARMUP=1s ROUNDS=1 ONLY=load SCENARIOS=0,1 bench/run.sh   # a quick partial check
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
RELOAD_TRACE=${RELOAD_TRACE:-}    # 1: the reload section prints each edit's times to stderr
SIZES=${SIZES:-10,100,1000}
CAP=${CAP:-100}
OPS_ROUNDS=${OPS_ROUNDS:-8}       # pairs of runs, operations off and on
OPS_DURATION=${OPS_DURATION:-5s}  # per run of a pair
ALL_SECTIONS=load,ops,tasks,reload,tree,shared,gobench,tier
ONLY=${ONLY:-$ALL_SECTIONS}       # the sections to run
SCENARIOS=${SCENARIOS:-0,1,2,3}   # the load scenarios to run
PEERS=${PEERS:-node,php}          # the other servers of the load scenarios: node, php (nginx + PHP-FPM), or none
PHP_CHILDREN=${PHP_CHILDREN:-$(($(nproc) * 2))}  # PHP-FPM workers (pm static)

log() { printf '[bench] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
in_list() { [[ ",$2," == *",$1,"* ]]; } # item comma-list
want() { in_list "$1" "$ONLY"; }       # section
want_peer() { want load && in_list "$1" "$PEERS"; }
# check_list fails on a name of list that known lacks, and sets PARTIAL
# when list lacks one of full.
PARTIAL=""
check_list() { # setting list known full
	local x
	for x in ${2//,/ }; do in_list "$x" "$3" || die "$1: unknown name $x (known: $3)"; done
	for x in ${4//,/ }; do in_list "$x" "$2" || PARTIAL=1; done
}
check_list ONLY "$ONLY" "$ALL_SECTIONS" "$ALL_SECTIONS"
check_list SCENARIOS "$SCENARIOS" 0,1,2,3 0,1,2,3
check_list PEERS "$PEERS" node,php,none node,php
# A partial run never replaces the full results unless OUT says so; but
# ONLY=tier replaces section 8 of RESULTS.md (or of OUT) and nothing else.
TIER_ONLY=""
if [ "$ONLY" = tier ]; then TIER_ONLY=1; OUT=${OUT:-$REPO/bench/RESULTS.md}
elif [ -n "$PARTIAL" ]; then OUT=${OUT:-${TMPDIR:-/tmp}/zealgo-bench-partial.md}; else OUT=${OUT:-$REPO/bench/RESULTS.md}; fi

apt_install() { # Debian packages
	log "installing $*"
	if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
	else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; fi
}
# shellcheck source=bench/ref/peers.sh
. "$REPO/bench/ref/peers.sh"

if { want load || want ops || want tasks || want tier; } && ! command -v wrk >/dev/null 2>&1; then apt_install wrk; fi
IFS=, read -ra PEER_LIST <<<"$PEERS"
if want load; then peers_install "${PEER_LIST[@]}"; fi

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
# stop stops the servers given by PID (empty ones skipped) and waits for them.
stop() {
	local p
	for p in "$@"; do [ -n "$p" ] && { kill "$p" 2>/dev/null || true; }; done
	for p in "$@"; do [ -n "$p" ] && { wait "$p" 2>/dev/null || true; }; done
	return 0
}

CMDS=()   # the exact commands, for RESULTS.md
note_cmd() { CMDS+=("$*"); }

# shellcheck source=bench/ports.sh
. "$REPO/bench/ports.sh" # free_port, wait_port

# http_answer: HTTP/1.0 over bash's /dev/tcp, no curl needed.
http_answer() { # port path -> sets ANS_STATUS, ANS_TYPE (media type) and ANS_BODY
	local resp head
	exec 3<>"/dev/tcp/127.0.0.1/$1"
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
	resp=$(cat <&3)
	exec 3<&-
	head=${resp%%$'\r\n\r\n'*}
	ANS_BODY=${resp#*$'\r\n\r\n'}
	read -r _ ANS_STATUS _ <<<"$head"
	ANS_TYPE=$(awk 'tolower($1) == "content-type:" {sub(/;.*/, "", $2); sub(/\r$/, "", $2); print $2}' <<<"$head")
}

http_get() { # port path -> body
	http_answer "$1" "$2"
	printf '%s' "$ANS_BODY"
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
BUILT=()
if want load || want ops || want tasks || want reload || want tree || want shared; then BUILT+=(zbench); fi
if want load; then BUILT+=(ref); fi
if want reload; then BUILT+=(reload); fi
if want tree; then BUILT+=(treescale); fi
if want shared; then BUILT+=(sharedpkg); fi
for c in "${BUILT[@]}"; do
	go build -o "$WORK/bin/$c" "./bench/cmd/$c"
done
note_cmd "go build -o \$BIN/<cmd> ./bench/cmd/<cmd>   # ${BUILT[*]}"
if want load; then
	# The same application with every handler compiled (issue 18): zbench's
	# own main, made by zealgo build from bench/app.
	"$WORK/bin/zbench" build --root bench/app -o "$WORK/bin/zbench-built" >"$WORK/build.log" 2>&1
	note_cmd "zbench build --root bench/app -o \$BIN/zbench-built"
fi
if want tree && [ "${TREE_BUILT:-1}" = 1 ]; then
	log "treescale -built compiles the largest tree: a few minutes"
fi

# --- application root ----------------------------------------------------------
ROOT=$WORK/root
cp -r bench/app "$ROOT"
mkdir -p "$ROOT/public"
# A 4 KiB static file, the same bytes every run.
awk 'BEGIN { for (i = 0; i < 4096; i++) printf "%c", (i % 64 == 63) ? 10 : 97 + i % 26 }' >"$ROOT/public/file4k.txt"

# --- servers ------------------------------------------------------------------
# Each is started only when a section that was asked for uses it.
ZPID="" OPID="" JPID="" RPID="" NPID="" FPID="" XPID="" BPID="" TPID="" EPID=""
ZPORT="" OPORT="" OMPORT="" JPORT="" RPORT="" NPORT="" PPORT="" BPORT="" TPORT="" EPORT=""
if want load || want ops || want tasks || want reload; then
	ZPORT=$(free_port)
	"$WORK/bin/zbench" serve --root "$ROOT" --addr "127.0.0.1:$ZPORT" --task-workers 2 --nats off >"$WORK/zbench.log" 2>&1 &
	ZPID=$!; PIDS+=("$ZPID")
	note_cmd "zbench serve --root \$ROOT --addr 127.0.0.1:\$ZPORT --task-workers 2 --nats off"
	wait_port "$ZPORT"
	log "zealgo pid $ZPID port $ZPORT"
fi
if want ops || { want load && in_list 1 "$SCENARIOS"; }; then
	# The same server with operations on: Prometheus metrics on their own
	# listener and the access log, JSON, to a file (scenario 1, ops row).
	OPORT=$(free_port)
	OMPORT=$(free_port)
	"$WORK/bin/zbench" serve --root "$ROOT" --addr "127.0.0.1:$OPORT" --task-workers 2 --nats off --data "$WORK/ops-data" \
		--metrics-addr "127.0.0.1:$OMPORT" --access-log --log-format json >"$WORK/zbench-ops.log" 2>&1 &
	OPID=$!; PIDS+=("$OPID")
	note_cmd "zbench serve --root \$ROOT --addr 127.0.0.1:\$OPORT --task-workers 2 --nats off --data \$OPS_DATA --metrics-addr 127.0.0.1:\$OMPORT --access-log --log-format json 2>zbench-ops.log"
	wait_port "$OPORT"
fi
if want tasks; then
	# The same server with tasks on NATS JetStream (the embedded server, serve's default), for scenario 6.
	JPORT=$(free_port)
	"$WORK/bin/zbench" serve --root "$ROOT" --addr "127.0.0.1:$JPORT" --data "$WORK/data-js" --task-workers 2 >"$WORK/zbench-js.log" 2>&1 &
	JPID=$!; PIDS+=("$JPID")
	note_cmd "zbench serve --root \$ROOT --addr 127.0.0.1:\$JPORT --data \$WORK/data-js --task-workers 2   # NATS JetStream, embedded"
	wait_port "$JPORT"
fi
if want load; then
	RPORT=$(free_port)
	"$WORK/bin/ref" --addr "127.0.0.1:$RPORT" --root "$ROOT" >"$WORK/ref.log" 2>&1 &
	RPID=$!; PIDS+=("$RPID")
	note_cmd "ref --addr 127.0.0.1:\$RPORT --root \$ROOT"
	wait_port "$RPORT"
	log "reference pid $RPID port $RPORT"
	# The two other shapes of the reference: typed structs and no middleware
	# (the ceiling), and bare with the middleware that gives what zealgo
	# gives by default.
	TPORT=$(free_port)
	"$WORK/bin/ref" --shape typed --addr "127.0.0.1:$TPORT" --root "$ROOT" >"$WORK/ref-typed.log" 2>&1 &
	TPID=$!; PIDS+=("$TPID")
	note_cmd "ref --shape typed --addr 127.0.0.1:\$TPORT --root \$ROOT"
	wait_port "$TPORT"
	EPORT=$(free_port)
	"$WORK/bin/ref" --shape full --addr "127.0.0.1:$EPORT" --root "$ROOT" >"$WORK/ref-full.log" 2>&1 &
	EPID=$!; PIDS+=("$EPID")
	note_cmd "ref --shape full --addr 127.0.0.1:\$EPORT --root \$ROOT"
	wait_port "$EPORT"
	BPORT=$(free_port)
	"$WORK/bin/zbench-built" serve --root "$ROOT" --addr "127.0.0.1:$BPORT" --task-workers 2 --nats off --data "$WORK/built-data" >"$WORK/zbench-built.log" 2>&1 &
	BPID=$!; PIDS+=("$BPID")
	note_cmd "zbench-built serve --root \$ROOT --addr 127.0.0.1:\$BPORT --task-workers 2 --nats off"
	wait_port "$BPORT"
	log "built pid $BPID port $BPORT"
	if want_peer node; then start_node; fi
	if want_peer php; then start_php; fi
fi

DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
NPROC=$(nproc)
UPTIME_BEFORE=$(uptime)

# --- load runs (scenarios 0-3) -----------------------------------------------------
# Rows: id|scenario|server|port|path|reference-row-id|conns. An id ends in
# -ref (bare Echo), -z (zealgo), -node or -php (the peers; static-php is
# nginx alone); the summary table reads those.
NODE="Node \`http\`, raw (one process)"
PHP="nginx + PHP-FPM (OPcache)"
ALL_ROWS=(
	"hello-ref|0. JSON /api/hello|bare Echo, handler compiled (reference)|$RPORT|/api/hello||$CONNS"
	"hello-z|0. JSON /api/hello|zealgo, handler interpreted|$ZPORT|/api/hello|hello-ref|$CONNS"
	"hello-b|0. JSON /api/hello|zealgo build, handler compiled|$BPORT|/api/hello|hello-ref|$CONNS"
	"hello-typed|0. JSON /api/hello|Echo v5, typed structs, no middleware (ceiling)|$TPORT|/api/hello|hello-ref|$CONNS"
	"hello-full|0. JSON /api/hello|Echo v5 + zealgo's default middleware|$EPORT|/api/hello|hello-ref|$CONNS"
	"hello-node|0. JSON /api/hello|$NODE|$NPORT|/api/hello|hello-ref|$CONNS"
	"hello-php|0. JSON /api/hello|$PHP|$PPORT|/api/hello|hello-ref|$CONNS"
	"get-ref|1. JSON /api/php/get?a=1&b=two|bare Echo, handler compiled (reference)|$RPORT|/api/php/get?a=1&b=two||$CONNS"
	"get-z|1. JSON /api/php/get?a=1&b=two|zealgo, handler interpreted|$ZPORT|/api/php/get?a=1&b=two|get-ref|$CONNS"
	"get-ops|1. JSON /api/php/get?a=1&b=two|zealgo, handler interpreted, metrics and JSON access log on (ratio to the row above it)|$OPORT|/api/php/get?a=1&b=two|get-z|$CONNS"
	"get-h|1. JSON /api/php/get?a=1&b=two|zealgo, body in a compiled helper (the floor: framework + one interpreted call)|$ZPORT|/api/bench/gethelper?a=1&b=two|get-ref|$CONNS"
	"get-b|1. JSON /api/php/get?a=1&b=two|zealgo build, handler compiled|$BPORT|/api/php/get?a=1&b=two|get-ref|$CONNS"
	"get-typed|1. JSON /api/php/get?a=1&b=two|Echo v5, typed structs, no middleware (ceiling)|$TPORT|/api/php/get?a=1&b=two|get-ref|$CONNS"
	"get-full|1. JSON /api/php/get?a=1&b=two|Echo v5 + zealgo's default middleware|$EPORT|/api/php/get?a=1&b=two|get-ref|$CONNS"
	"get-node|1. JSON /api/php/get?a=1&b=two|$NODE|$NPORT|/api/php/get?a=1&b=two|get-ref|$CONNS"
	"get-php|1. JSON /api/php/get?a=1&b=two|$PHP|$PPORT|/api/php/get?a=1&b=two|get-ref|$CONNS"
	"work-ref|2. build + JSON-encode 100 records|bare Echo, compiled (reference)|$RPORT|/api/bench/work||$CONNS"
	"work-z|2. build + JSON-encode 100 records|zealgo, loop interpreted|$ZPORT|/api/bench/work|work-ref|$CONNS"
	"work-h|2. build + JSON-encode 100 records|zealgo, loop in a compiled helper (Provide)|$ZPORT|/api/bench/helper|work-ref|$CONNS"
	"work-b|2. build + JSON-encode 100 records|zealgo build, loop compiled|$BPORT|/api/bench/work|work-ref|$CONNS"
	"work-typed|2. build + JSON-encode 100 records|Echo v5, typed structs, no middleware (ceiling)|$TPORT|/api/bench/work|work-ref|$CONNS"
	"work-full|2. build + JSON-encode 100 records|Echo v5 + zealgo's default middleware|$EPORT|/api/bench/work|work-ref|$CONNS"
	"work-node|2. build + JSON-encode 100 records|$NODE|$NPORT|/api/bench/work|work-ref|$CONNS"
	"work-php|2. build + JSON-encode 100 records|$PHP|$PPORT|/api/bench/work|work-ref|$CONNS"
	"static-ref|3. static 4 KiB file|bare Echo static (reference)|$RPORT|/file4k.txt||$CONNS"
	"static-z|3. static 4 KiB file|zealgo public/|$ZPORT|/file4k.txt|static-ref|$CONNS"
	"static-b|3. static 4 KiB file|zealgo build public/|$BPORT|/file4k.txt|static-ref|$CONNS"
	"static-full|3. static 4 KiB file|Echo v5 static + zealgo's default middleware|$EPORT|/file4k.txt|static-ref|$CONNS"
	"static-node|3. static 4 KiB file|$NODE, stat + fs.createReadStream|$NPORT|/file4k.txt|static-ref|$CONNS"
	"static-php|3. static 4 KiB file|nginx static (sendfile, no PHP)|$PPORT|/file4k.txt|static-ref|$CONNS"
)
STATIC_STATUS=200
if want load && in_list 3 "$SCENARIOS"; then STATIC_STATUS=$(http_status "$ZPORT" /file4k.txt); fi
if [ "$STATIC_STATUS" != 200 ]; then
	log "zealgo does not serve public/file4k.txt (status $STATIC_STATUS): static scenario skipped"
fi
ROWS=()
if want load; then
	for row in "${ALL_ROWS[@]}"; do
		IFS='|' read -r id scen _ port _ <<<"$row"
		if [ -z "$port" ] || ! in_list "${scen%%.*}" "$SCENARIOS"; then continue; fi # not run, or not asked for
		if [ "${scen%%.*}" = 3 ] && [ "$STATIC_STATUS" != 200 ]; then continue; fi
		ROWS+=("$row")
	done
fi

# Every row must answer as its scenario's reference does, before anything is
# measured: status 200, the same media type, the same body (up to a final
# newline: Echo's JSON encoder ends with one, zealgo's does not), and for
# the static file, the file's bytes.
check_answers() {
	local row id scen port path ref_body ref_type
	declare -A want_body want_type
	for row in "${ROWS[@]}"; do
		IFS='|' read -r id scen _ port path _ <<<"$row"
		http_answer "$port" "$path"
		[ "$ANS_STATUS" = 200 ] || die "$id: http://127.0.0.1:$port$path answered status $ANS_STATUS: $(head -c 300 <<<"$ANS_BODY")"
		if [ "${id%-ref}" != "$id" ]; then
			want_body[$scen]=$ANS_BODY want_type[$scen]=$ANS_TYPE
			if [ "${scen%%.*}" = 3 ] && [ "$ANS_BODY" != "$(cat "$ROOT/public/file4k.txt")" ]; then
				die "$id: the static file's body differs from public/file4k.txt"
			fi
			continue
		fi
		ref_body=${want_body[$scen]} ref_type=${want_type[$scen]}
		if [ "$ANS_BODY" != "$ref_body" ] || [ "$ANS_TYPE" != "$ref_type" ]; then
			log "$id: http://127.0.0.1:$port$path does not answer as bare Echo does"
			log "  Echo: $ref_type $(head -c 300 <<<"$ref_body")"
			log "  this: $ANS_TYPE $(head -c 300 <<<"$ANS_BODY")"
			die "answers differ: fix the server before measuring it"
		fi
	done
	log "every row answers as its reference does (${#ROWS[@]} rows)"
}
check_answers

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

if [ ${#ROWS[@]} -gt 0 ]; then
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
fi
OPCACHE=""
if [ -n "$XPID" ]; then OPCACHE=$(http_get "$PPORT" /opcache.php); fi
PEER_INFO=$(peer_versions)
# The peers are done: they leave the cores to what follows.
stop "$NPID" "$XPID" "$FPID" "$RPID" "$TPID" "$EPID"

# --- 1 with operations on: pairs of short runs ----------------------------------
# The same server with operations off and on, in back-to-back pairs whose
# order swaps every round, so that a change of the machine's load touches
# both runs of a pair alike; the median of the pairs' ratios is reported.
# Besides requests/s, each run reads the CPU time the server process used
# (/proc/<pid>/stat, with its children's): CPU per request is the cost operations add, and
# depends far less on what else the machine runs than requests/s do.
if want ops; then
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
fi

# --- 6. tasks ---------------------------------------------------------------------
# The local pool (--nats off) and NATS JetStream side by side, in alternating rounds.
if want tasks; then
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
	stop "$JPID"
	# In process: the local pool beside JetStream with 1 and 2 workers and with 2 instances.
	log "tasks: go benchmark BenchmarkTaskEngines"
	go test -c -o "$WORK/host.test" ./host
	TASKBENCH_LOAD=$(uptime | sed 's/.*load average: //')
	TASKBENCH=$(cd host && "$WORK/host.test" -test.run '^$' -test.bench 'BenchmarkTaskEngines' -test.benchtime "${TASK_BENCH_N:-20000}x" 2>&1 | grep -E '^Benchmark')
	note_cmd "go test ./host -run '^\$' -bench BenchmarkTaskEngines -benchtime ${TASK_BENCH_N:-20000}x"
fi

# --- 4. hot reload ---------------------------------------------------------------
if want reload; then
	log "hot reload: $EDITS edits under load"
	RELOAD=$("$WORK/bin/reload" -url "http://127.0.0.1:$ZPORT" -root "$ROOT" -edits "$EDITS" -load 8 ${RELOAD_TRACE:+-trace})
	note_cmd "reload -url http://127.0.0.1:\$ZPORT -root \$ROOT -edits $EDITS -load 8"
fi

if [ -n "$OPID" ]; then # what the server with operations on recorded of its requests
	ACCESS_LINES=$(grep -c '"msg":"request"' "$WORK/zbench-ops.log" || true)
	METRIC_COUNT=$(http_get "$OMPORT" /metrics | awk '/^zealgo_http_requests_total\{.*handler="api\/php\/get.go"/ {n += $NF} END {printf "%d", n}')
fi
stop "$ZPID" "$OPID"

# --- 5. tree scale --------------------------------------------------------------------
if want tree; then
	log "tree scale: $SIZES files, cap $CAP"
	TREE=$("$WORK/bin/treescale" -bin "$WORK/bin/zbench" -sizes "$SIZES" -cap "$CAP")
	note_cmd "treescale -bin \$BIN/zbench -sizes $SIZES -cap $CAP"
	if [ "${TREE_BUILT:-1}" = 1 ]; then
		# The largest tree again, every file compiled by zealgo build (from the repository root).
		BIG=${SIZES##*,}
		TREE_B=$("$WORK/bin/treescale" -built -bin "$WORK/bin/zbench" -sizes "$BIG" -cap 0)
		TREE="$TREE"$'\n\n'"The same tree of $BIG files compiled by \`zealgo build\` (no interpreter):"$'\n\n'"$TREE_B"
		note_cmd "treescale -built -bin \$BIN/zbench -sizes $BIG -cap 0"
	fi
fi

# --- 7. shared package ----------------------------------------------------------------
if want shared; then
	log "shared package: 100 handler files with and without a 300-line package"
	SHARED=$("$WORK/bin/sharedpkg" -bin "$WORK/bin/zbench" -files 100 -lines 300)
	note_cmd "sharedpkg -bin \$BIN/zbench -files 100 -lines 300"
fi

# --- Go benchmarks and profile ------------------------------------------------------
if want gobench; then
	log "go benchmarks"
	go test -c -o "$WORK/host.test" ./host
	GOBENCH=$(cd host && "$WORK/host.test" -test.run '^$' -test.bench 'BenchmarkDispatch' -test.benchmem -test.benchtime 1s 2>&1 | grep -E '^Benchmark|^cpu:')
	note_cmd "go test ./host -run '^\$' -bench BenchmarkDispatch -benchmem -benchtime 1s"
	LIVEBENCH=$(cd host && "$WORK/host.test" -test.run '^$' -test.bench 'BenchmarkRoomBroadcast' -test.benchmem -test.benchtime 2s 2>&1 | grep -E '^Benchmark')
	note_cmd "go test ./host -run '^\$' -bench BenchmarkRoomBroadcast -benchmem -benchtime 2s"
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
fi

# --- 8. tiered serve -------------------------------------------------------------------
# shellcheck source=bench/tier.sh
. "$REPO/bench/tier.sh"
if want tier; then tier_run; fi

UPTIME_AFTER=$(uptime)

# --- RESULTS.md ---------------------------------------------------------------------
# shellcheck source=bench/report.sh
. "$REPO/bench/report.sh"
if [ -n "$TIER_ONLY" ]; then
	[ -f "$OUT" ] || : >"$OUT"
	tier_splice "$OUT"
	log "wrote section 8 of $OUT"
	exit 0
fi
{
	write_header
	echo
	write_load
	write_ops
	echo
	write_reload
	write_tree
	write_tasks
	write_shared
	write_gobench
	write_tier
	write_raw
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "wrote $OUT"
