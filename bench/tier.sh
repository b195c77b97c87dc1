# bench/tier.sh — sourced by bench/run.sh: section 8, tiered `zealgo serve`
# (issue 29). A module copy of bench/app (go.mod from `zealgo new`, which
# replaces github.com/zealgo/zealgo by this checkout) with a SQLite endpoint
# (bench/tier/), served three ways side by side: tiered serve once it has
# switched to its native build, the `zealgo build` binary of the same
# application, and `serve --tiered=false`; then the build times and an
# editing session under load (bench/cmd/tierload). tier_run leaves the
# section's Markdown in TIER_MD; write_tier prints it.
# shellcheck shell=bash disable=SC2153,SC2154

TIER_ROUNDS=${TIER_ROUNDS:-10}          # measured rounds, each two tiered/built pairs per endpoint (ABBA), after a discarded warm-up round
TIER_DURATION=${TIER_DURATION:-3s}      # per wrk run of a round
TIER_SAVES=${TIER_SAVES:-150}           # saves of the editing session (p99 of 150 is not its max)
TIER_SWITCHES=${TIER_SWITCHES:-20}      # of which followed by a switch to a new build
TIER_COLD=${TIER_COLD:-1}               # 0: skip the first build on a cold build cache
TIER_RATE=${TIER_RATE:-1000}            # requests/s of the session's 8 clients together (0: no pause)
TIER_BUDGET=${TIER_BUDGET:-20m}         # the session ends after this long, with what it measured (0: no limit)
TIER_GET="/api/php/get?a=1&b=two"
TIER_DB="/api/bench/items"

# tier_app DIR: the application, a Go module.
tier_app() {
	mkdir -p "$1/api/php" "$1/api/bench"
	cp "$WORK/tier-new/app/go.mod" "$WORK/tier-new/app/go.sum" "$1/"
	cp bench/app/api/hello.go "$1/api/"
	cp bench/app/api/php/get.go "$1/api/php/"
	cp bench/app/api/bench/work.go "$1/api/bench/"
	cp -r bench/tier/. "$1/"
}

# tier_secs CMD...: runs CMD, its output to $WORK/tier-build.log, and prints its wall time in seconds.
tier_secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >>"$WORK/tier-build.log" 2>&1 || { tail -20 "$WORK/tier-build.log" >&2; die "tier: $* failed"; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}

# tier_wait_log FILE TEXT SECONDS: waits until FILE holds TEXT.
tier_wait_log() {
	local end=$((SECONDS + $3))
	until grep -q "$2" "$1"; do
		[ $SECONDS -lt $end ] || { tail -30 "$1" >&2; die "tier: no \"$2\" in $1 after $3 s"; }
		sleep 0.2
	done
}

# tier_cpu PID: CPU ticks of PID and its children (the supervisor and its serving process).
# (cat, as processes that end between the glob and the read would make awk fail.)
tier_cpu() { { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v p="$1" '$1 == p || $4 == p {t += $14 + $15} END {print t + 0}'; }

# tier_wrk ID PORT PID PATH: one measured run; appends "rps cpu-us-per-request" to TIER_RUN[ID].
tier_wrk() {
	local c0 c1 out
	c0=$(tier_cpu "$3")
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$TIER_DURATION" "http://127.0.0.1:$2$4")
	c1=$(tier_cpu "$3")
	if ! grep -q '[1-9][0-9]* requests in' <<<"$out"; then # no answer at all: say what wrk and the server said
		log "tier: $1: no request answered: $out"
		tail -20 "$WORK/tier-${1#*-}.log" >&2
	fi
	TIER_RUN[$1]+=$(awk -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" '/requests in/ {n = $1} /^Requests\/sec:/ {rps = $2}
		/Non-2xx or 3xx responses:/ {e += $NF} /Socket errors:/ {gsub(",", ""); e += $4 + $6 + $8 + $10}
		END {printf "%s:%.2f:%d ", rps + 0, (n > 0 ? t / hz * 1e6 / n : 0), e}' <<<"$out")
}

tier_start() { # name root port args... -> sets TIER_PID[name]
	local name=$1 root=$2 port=$3 bin=$4
	shift 4
	"$bin" serve --root "$root" --addr "127.0.0.1:$port" --data "$WORK/tier-data-$name" "$@" >"$WORK/tier-$name.log" 2>&1 &
	TIER_PID[$name]=$!
	PIDS+=("$!")
	wait_port "$port"
}

tier_run() {
	declare -gA TIER_RUN=() TIER_PID=() TIER_PORT=()
	TIER_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
	TIER_LOAD_BEFORE=$(uptime)
	log "tier: building zealgo and tierload"
	go build -o "$WORK/bin/zealgo" ./cmd/zealgo
	go build -o "$WORK/bin/tierload" ./bench/cmd/tierload
	mkdir -p "$WORK/tier-new"
	(cd "$WORK/tier-new" && GOFLAGS=-mod=mod GOWORK=off ZEALGO_SOURCE="$REPO" "$WORK/bin/zealgo" new app >/dev/null 2>&1) ||
		die "tier: zealgo new failed"
	local n
	for n in tiered built interp cold; do tier_app "$WORK/tier-app-$n"; done
	TIER_COLD_S="not run (TIER_COLD=0)"
	if [ "$TIER_COLD" = 1 ]; then
		log "tier: first build on a cold build cache (minutes)"
		TIER_COLD_S="$(GOCACHE="$WORK/tier-gocache" tier_secs "$WORK/bin/zealgo" build --root "$WORK/tier-app-cold" \
			--dir "$WORK/tier-cold-dir" -o "$WORK/bin/tier-cold") s"
		rm -rf "$WORK/tier-gocache" "$WORK/tier-cold-dir" "$WORK/bin/tier-cold"
	fi
	log "tier: zealgo build of the application (warm build cache)"
	TIER_WARM_S="$(tier_secs "$WORK/bin/zealgo" build --root "$WORK/tier-app-built" -o "$WORK/bin/tier-built") s"
	echo "// a comment" >>"$WORK/tier-app-built/api/bench/edit.go"
	TIER_WARM2_S="$(tier_secs "$WORK/bin/zealgo" build --root "$WORK/tier-app-built" -o "$WORK/bin/tier-built") s"
	for n in tiered built interp; do TIER_PORT[$n]=$(free_port); done
	log "tier: starting the three servers; tiered serve builds in the background"
	tier_start tiered "$WORK/tier-app-tiered" "${TIER_PORT[tiered]}" "$WORK/bin/zealgo"
	tier_start built "$WORK/tier-app-built" "${TIER_PORT[built]}" "$WORK/bin/tier-built"
	tier_start interp "$WORK/tier-app-interp" "${TIER_PORT[interp]}" "$WORK/bin/zealgo" --tiered=false
	tier_wait_log "$WORK/tier-tiered.log" "zealgo tier: serving a native build" 1800
	TIER_FIRST=$(sed -n 's/.*zealgo tier: build ready.* took=\([^ ]*\).*/\1/p' "$WORK/tier-tiered.log" | head -1)
	log "tier: switched to the native build (its build took $TIER_FIRST)"
	tier_check
	tier_rounds
	log "tier: editing session: $TIER_SAVES saves, $TIER_SWITCHES switches, under load"
	TIER_SESSION=$("$WORK/bin/tierload" -url "http://127.0.0.1:${TIER_PORT[tiered]}" -root "$WORK/tier-app-tiered" \
		-log "$WORK/tier-tiered.log" -pid "${TIER_PID[tiered]}" -saves "$TIER_SAVES" -switches "$TIER_SWITCHES" -load 8 -rate "$TIER_RATE" -budget "$TIER_BUDGET")
	stop "${TIER_PID[tiered]}" "${TIER_PID[built]}" "${TIER_PID[interp]}"
	# Tiered serve's log outlives the run's temp dir: the failed requests' request ids are in it.
	cp "$WORK/tier-tiered.log" "${TMPDIR:-/tmp}/zealgo-bench-tier-serve.log"
	log "tier: tiered serve's log kept in ${TMPDIR:-/tmp}/zealgo-bench-tier-serve.log"
	TIER_LOAD_AFTER=$(uptime)
	TIER_MD=$(tier_markdown)
}

# tier_check: the three answer both endpoints alike.
tier_check() {
	local path n want
	for path in "$TIER_GET" "$TIER_DB"; do
		want=""
		for n in built tiered interp; do
			http_answer "${TIER_PORT[$n]}" "$path"
			[ "$ANS_STATUS" = 200 ] || die "tier: $n $path answered $ANS_STATUS: $(head -c 300 <<<"$ANS_BODY")"
			[ -n "$want" ] || want=$ANS_BODY
			[ "$ANS_BODY" = "$want" ] || die "tier: $n $path answers $(head -c 200 <<<"$ANS_BODY"), built $(head -c 200 <<<"$want")"
		done
	done
}

# tier_rounds: a warm-up round, discarded, then TIER_ROUNDS rounds. A round
# runs each endpoint on the servers back to back in a mirrored order,
# tiered built interp interp built tiered (every other round built and
# tiered swapped), so that the runs of each pair (the k-th tiered and the
# k-th built run, likewise interp and built) are next to each other or
# one apart, and a load that rises or falls during the round weighs on
# both alike: a ratio is taken within each pair, and its median over the
# pairs reported with their spread.
tier_rounds() {
	local r ep n order
	log "tier: warm-up round (discarded)"
	for ep in get db; do
		for n in tiered built interp; do
			wrk -t"$THREADS" -c"$CONNS" -d"$TIER_DURATION" "http://127.0.0.1:${TIER_PORT[$n]}$(tier_path "$ep")" >/dev/null
		done
	done
	TIER_LOADS=""
	for r in $(seq 1 "$TIER_ROUNDS"); do
		log "tier: round $r of $TIER_ROUNDS"
		TIER_LOADS+="$(cut -d' ' -f1 /proc/loadavg) "
		order=(tiered built interp interp built tiered)
		((r % 2)) || order=(built tiered interp interp tiered built)
		for ep in get db; do
			for n in "${order[@]}"; do
				tier_wrk "$ep-$n" "${TIER_PORT[$n]}" "${TIER_PID[$n]}" "$(tier_path "$ep")"
			done
		done
	done
}

# tier_path EP: the path of endpoint get or db.
tier_path() { if [ "$1" = db ]; then echo "$TIER_DB"; else echo "$TIER_GET"; fi; }

# tier_median ID FIELD [OTHER]: the median over the runs of ID's field (1
# requests/s, 2 CPU µs per request); with OTHER, the median of the ratios
# of ID's k-th run to OTHER's k-th (its pair, tier_rounds) followed by
# their spread, "[min–max]" (but for ID's ratio to itself).
tier_median() {
	awk -v a="${TIER_RUN[$1]}" -v b="${3:+${TIER_RUN[$3]}}" -v f="$2" -v self="$([ "$1" = "${3:-}" ] && echo 1)" 'BEGIN {
		n = split(a, x, " "); if (b != "") split(b, y, " ")
		for (i = 1; i <= n; i++) { split(x[i], u, ":"); v[i] = u[f]; if (b != "") { split(y[i], w, ":"); v[i] = (w[f] > 0 ? u[f] / w[f] : 0) } }
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		if (b == "") printf "%.0f", m
		else if (self) printf "%.3f", m
		else printf "%.3f [%.2f–%.2f]", m, v[1], v[n] }'
}

tier_errors() { awk -v a="${TIER_RUN[$1]}" 'BEGIN { n = split(a, x, " "); for (i = 1; i <= n; i++) { split(x[i], u, ":"); e += u[3] } print e + 0 }'; }

tier_markdown() {
	local ep name n
	echo "Written by \`ONLY=tier bench/run.sh\` (or a full run) on $TIER_DATE, commit"
	echo "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' + uncommitted changes'), \`nproc\` = $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')."
	echo "Load before: \`$TIER_LOAD_BEFORE\`; after: \`$TIER_LOAD_AFTER\`."
	echo "The machine is shared with other sessions (see the load averages): absolute"
	echo "figures are low and noisy; the ratios within pairs of runs back to back, and"
	echo "the CPU per request of each server (its process tree's, from \`/proc\`), are the"
	echo "figures to read."
	echo
	echo "The application: a module copy of \`bench/app\` (\`hello\`, \`php/get\`, \`bench/work\`; go.mod"
	echo "from \`zealgo new\`, which replaces \`github.com/zealgo/zealgo\` by this checkout) with"
	echo "\`bench/tier/\`: \`api/bench/items.go\`, 20 rows of a 100-row SQLite table (the"
	echo "application's default database, \`migrations/001_items.sql\`), and \`api/bench/edit.go\`."
	echo "Three servers at once, each on a copy of it: **tiered** \`zealgo serve\` (defaults:"
	echo "settle 1 s), measured after the log said \`zealgo tier: serving a native build\`;"
	echo "**built**, the \`zealgo build\` binary's \`serve\`; **interpreted**, \`zealgo serve"
	echo "--tiered=false\`. The same wrk for all ($THREADS threads, $CONNS connections, $TIER_DURATION a run), no server"
	echo "pinned: a warm-up round (discarded), then $TIER_ROUNDS rounds, each running each endpoint"
	echo "on the servers back to back in a mirrored order, tiered built interp interp built"
	echo "tiered (built and tiered swapped every other round), so that the k-th tiered and"
	echo "the k-th built run (likewise interp and built) make a pair run next to each other"
	echo "or one apart: $((2 * TIER_ROUNDS)) pairs a server and endpoint. A ratio is taken within each pair;"
	echo "the table gives the median over the pairs and, in brackets, the lowest and the"
	echo "highest. Target (issue 29): tiered ≥ 0.95 of built."
	echo
	echo "| endpoint | server | requests/s (median) | ÷ built (median of the pairs' ratios [min–max]) | CPU µs per request (median) | CPU per request ÷ built (median [min–max]) | errors |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for ep in get db; do
		for n in tiered built interp; do
			name=$ep; [ "$ep" = get ] && name="1. \`$TIER_GET\`" || name="database \`$TIER_DB\`"
			echo "| $name | $n | $(tier_median "$ep-$n" 1) | $(tier_median "$ep-$n" 1 "$ep-built") | $(tier_median "$ep-$n" 2) | $(tier_median "$ep-$n" 2 "$ep-built") | $(tier_errors "$ep-$n") |"
		done
	done
	echo
	echo "Load average (1 min) at the start of each round: $TIER_LOADS"
	echo
	echo "Every run, in order (requests/s:CPU µs per request:errors; the k-th runs of two servers are a pair):"
	echo
	for ep in get db; do
		for n in tiered built interp; do echo "- $ep, $n: ${TIER_RUN[$ep-$n]}"; done
	done
	echo
	echo "### Build times"
	echo
	echo "| build | wall time |"
	echo "|---|---:|"
	echo "| \`zealgo build\`, first build on a cold build cache (a fresh \`GOCACHE\`; modules already downloaded) | $TIER_COLD_S |"
	echo "| \`zealgo build\`, first build of the application on a warm build cache (zealgo's packages compiled by \`go build ./cmd/zealgo\`) | $TIER_WARM_S |"
	echo "| \`zealgo build\` again after a one-file edit | $TIER_WARM2_S |"
	echo "| tiered serve's first background build (nice 10; its log's \`took=\`) | $TIER_FIRST |"
	echo
	echo "### Editing session under load"
	echo
	echo "\`bench/cmd/tierload\` saves \`api/bench/edit.go\` $TIER_SAVES times on the tiered server while 8"
	echo "clients request it and \`$TIER_GET\` in turn, $TIER_RATE requests/s together (0: without"
	echo "pause; paced, so that the builds at nice 10 are not starved by the load generator on"
	echo "a 2-core machine); each save is timed from the"
	echo "write to the first response with its version (interpreted), and after $TIER_SWITCHES of"
	echo "them, spread over the session, it waits for the switch to the native build that"
	echo "includes the save (the others follow at once, so that their builds merge). Settle:"
	echo "the quiet time from the last save to the build's start (the log's \`build started\`);"
	echo "save to switch: from the write to the log's \`serving a native build\`. CPU: the"
	echo "supervisor's process tree from \`/proc/<pid>/stat\` (utime+stime of the live"
	echo "processes, cutime+cstime of those they reaped), less the serving processes' and the"
	echo "supervisor's own (sampled every 10 ms); RSS of the supervisor and its serving"
	echo "processes sampled every 10 ms. Targets (issue 29): p99 ≤ 50 ms, 0 failed requests."
	echo
	echo "$TIER_SESSION"
	echo
	echo "### Commands"
	echo
	echo '```'
	echo "go build -o \$BIN/zealgo ./cmd/zealgo && go build -o \$BIN/tierload ./bench/cmd/tierload"
	echo "GOFLAGS=-mod=mod GOWORK=off ZEALGO_SOURCE=\$REPO zealgo new app   # its go.mod and go.sum, plus bench/app's handlers and bench/tier/"
	echo "GOCACHE=\$(mktemp -d) zealgo build --root \$APP --dir \$TMP -o \$BIN/cold"
	echo "zealgo build --root \$APP -o \$BIN/built"
	echo "zealgo serve --root \$APP --addr 127.0.0.1:\$PORT --data \$DATA            # tiered"
	echo "\$BIN/built serve --root \$APP --addr 127.0.0.1:\$PORT --data \$DATA       # built"
	echo "zealgo serve --tiered=false --root \$APP --addr 127.0.0.1:\$PORT --data \$DATA"
	echo "wrk -t$THREADS -c$CONNS -d$TIER_DURATION http://127.0.0.1:\$PORT<path>   # a warm-up round, then $TIER_ROUNDS mirrored rounds (ABBA)"
	echo "tierload -url http://127.0.0.1:\$PORT -root \$APP -log serve.log -pid \$SUPERVISOR -saves $TIER_SAVES -switches $TIER_SWITCHES -load 8 -rate $TIER_RATE -budget $TIER_BUDGET"
	echo '```'
}

# write_tier: section 8 between its markers, which a run with ONLY=tier
# replaces in RESULTS.md (tier_splice).
write_tier() {
	echo
	echo "<!-- tier:begin -->"
	echo "## 8. Tiered serve"
	echo
	if want tier; then echo "$TIER_MD"; else not_run; fi
	echo "<!-- tier:end -->"
}

# tier_splice FILE: replaces section 8 of FILE (between its markers, or at
# the end when it has none) by this run's.
tier_splice() {
	local new
	new=$(write_tier)
	if grep -q '^<!-- tier:begin -->$' "$1"; then
		repl=$new awk '/^<!-- tier:begin -->$/ {print substr(ENVIRON["repl"], 2); skip = 1; next}
			/^<!-- tier:end -->$/ {skip = 0; next} !skip' "$1" >"$1.tmp"
	else
		{ cat "$1"; printf '%s\n' "$new"; } >"$1.tmp"
	fi
	mv "$1.tmp" "$1"
}
