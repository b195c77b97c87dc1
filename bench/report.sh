# bench/report.sh — sourced by bench/run.sh: the writers of RESULTS.md, one
# per section, reading what run.sh measured (RPS, P50, P99, ERRS, RAW, ROWS,
# the sections' outputs) and its settings. A section that was not asked for
# (ONLY) says so.
# shellcheck shell=bash disable=SC2153,SC2154

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
not_run() { echo "Not run in this run (ONLY=$ONLY)."; }

write_header() {
	echo "# zealgo benchmark results"
	echo
	echo "Written by \`bench/run.sh\` — do not edit by hand; run it again."
	if [ -n "$PARTIAL" ]; then
		echo
		echo "**A partial run** (ONLY=$ONLY, SCENARIOS=$SCENARIOS, PEERS=$PEERS): a quick check, not a result."
	fi
	echo
	echo "| | |"
	echo "|---|---|"
	echo "| date | $DATE |"
	echo "| machine | \`nproc\` = $NPROC, $CPU |"
	echo "| load before | \`$UPTIME_BEFORE\` |"
	echo "| load after | \`$UPTIME_AFTER\` |"
	echo "| go | $(go version) |"
	echo "| other servers | $PEER_INFO |"
	echo "| commit | $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' + uncommitted changes') |"
	echo "| settings | DURATION=$DURATION WARMUP=$WARMUP CONNS=$CONNS THREADS=$THREADS ROUNDS=$ROUNDS EDITS=$EDITS SIZES=$SIZES CAP=$CAP OPS_ROUNDS=$OPS_ROUNDS OPS_DURATION=$OPS_DURATION ONLY=$ONLY SCENARIOS=$SCENARIOS PEERS=$PEERS PHP_CHILDREN=$PHP_CHILDREN |"
	echo
	echo "The machine is shared (other builds and tests may run meanwhile; see the load"
	echo "averages). wrk, the servers and anything else share the same $NPROC cores, so the"
	echo "absolute numbers are low and noisy; the ratios, measured in the same run with"
	echo "alternating rounds, are what matter. Each row reports the best of its $ROUNDS"
	echo "rounds; every round is listed under Raw runs."
}

# write_summary: every server's ratio to bare Echo, one column per scenario
# (the row ids' prefixes), one row per server (their suffixes).
write_summary() {
	local col num prefix title cols=() head="| server |" rule="|---|" srv line id
	for col in "0 hello hello" "1 get php/get" "2 work 100 records" "3 static static file"; do
		read -r num prefix title <<<"$col"
		[ -n "${RPS[$prefix-ref]:-}" ] || continue
		cols+=("$prefix")
		head+=" $num. $title |" rule+="---:|"
	done
	[ ${#cols[@]} -gt 0 ] || return 0
	echo "### Every server against bare Echo (ratio of requests/s; higher is faster)"
	echo
	echo "$head"
	echo "$rule"
	for srv in "ref:Echo v5, compiled" "typed:Echo v5, typed structs (ceiling)" "full:Echo v5 + default middleware" "node:$NODE" "z:zealgo, interpreted" "b:zealgo build, compiled" "php:nginx + PHP-FPM (OPcache; static: nginx alone)"; do
		line="| ${srv#*:} |"
		for prefix in "${cols[@]}"; do
			id=$prefix-${srv%%:*}
			if [ -n "${RPS[$id]:-}" ]; then line+=" $(ratio "${RPS[$id]}" "${RPS[$prefix-ref]}") |"; else line+=" - |"; fi
		done
		echo "$line"
	done
	echo
}

# write_shapes: zealgo against each shape of the Echo v5 reference (bare,
# with the middleware zealgo gives by default, typed structs).
write_shapes() {
	local prefix srv id line
	[ -n "${RPS[get-typed]:-}" ] || return 0
	echo "### zealgo against each Echo v5 reference (ratio of requests/s)"
	echo
	echo "| scenario | zealgo | bare Echo | Echo + default middleware | typed Echo, no middleware (ceiling) |"
	echo "|---|---|---:|---:|---:|"
	for prefix in hello get work; do
		for srv in "b:zealgo build" "z:interpreted"; do
			id=$prefix-${srv%%:*}
			[ -n "${RPS[$id]:-}" ] || continue
			line="| $prefix | ${srv#*:} | $(ratio "${RPS[$id]}" "${RPS[$prefix-ref]}") |"
			line+=" $(ratio "${RPS[$id]}" "${RPS[$prefix-full]}") | $(ratio "${RPS[$id]}" "${RPS[$prefix-typed]}") |"
			echo "$line"
		done
	done
	echo
	echo "Targets (issue 26): \`zealgo build\` at ≥ 1.0 of Echo with the default middleware and ≥ 0.95 of"
	echo "typed Echo. The default middleware: RequestID, Recover, Secure, BodyLimit(8M),"
	echo "ContextTimeout(30s), with the server's header, write and idle timeouts (bench/cmd/ref)."
	echo
}

write_load() {
	echo "## Load: requests/s, latency and ratio to the reference (scenarios 0–3)"
	echo
	if ! want load; then not_run; return; fi
	write_summary
	write_shapes
	echo "### Every row"
	echo
	echo "| scenario | server | requests/s | p50 | p99 | errors | ratio to reference |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for row in "${ROWS[@]}"; do
		IFS="|" read -r id scen server _ path ref _ <<<"$row"
		r="1.00 (reference)"
		[ -n "$ref" ] && r=$(ratio "${RPS[$id]}" "${RPS[$ref]}")
		echo "| $scen | $server \`$path\` | ${RPS[$id]} | ${P50[$id]} ms | ${P99[$id]} ms | ${ERRS[$id]} | $r |"
	done
	echo
	echo "Connections: $CONNS, wrk threads: $THREADS. Target of scenario 1: ratio ≥ 0.90."
	echo "Every server answered the same status, media type and body as bare Echo before"
	echo "it was measured (Node and PHP add the final newline Echo's encoder writes)."
	echo "Node is one process (\`node server.js\`, no cluster), its static answer a stat and"
	echo "\`fs.createReadStream\` per request; nginx runs a worker per core and serves the"
	echo "static file itself (sendfile); PHP-FPM runs $PHP_CHILDREN workers behind it, OPcache on."
	if [ "$STATIC_STATUS" != 200 ]; then
		echo
		echo "Scenario 3 skipped: zealgo answered $STATIC_STATUS for /file4k.txt (static serving not in this build)."
	fi
}

write_ops() {
	echo
	echo "### Operations on"
	echo
	if ! want ops; then not_run; return; fi
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
}

write_reload() {
	echo "## 4. Hot reload"
	echo
	echo "Each edit rewrites \`api/bench/edit.go\` in place (truncate + write) while 8 clients"
	echo "request it and \`/api/php/get\` without pause; the time runs from the write to the"
	echo "first response showing the new version: from the end of the save (the write returned, the new"
	echo "bytes are on disk) and from its start (before the truncating open), and the save itself is timed"
	echo "too. Target: p99 ≤ 50 ms, 0 failed requests."
	echo
	if want reload; then echo "$RELOAD"; else not_run; fi
}

write_tree() {
	echo
	echo "## 5. Scale of the handler tree"
	echo
	echo "Every file is a small distinct handler. Start is exec to the first answer (compile"
	echo "is lazy: nothing is compiled at start). RSS and heap are read after"
	echo "\`debug.FreeOSMemory\` (the memory probe is one more loaded file). The last row runs"
	echo "the largest tree with \`MaxLoadedFiles\` = $CAP (\`host.WithMaxLoadedFiles\`): the"
	echo "least recently used interpreters are unloaded and recompiled on demand."
	echo
	if want tree; then echo "$TREE"; else not_run; fi
}

write_tasks() {
	echo
	echo "## 6. Task dispatch"
	echo
	if ! want tasks; then
		not_run
	elif [ -n "$TASK_NOTE" ]; then
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
	if want tasks && [ -n "$TASKBENCH" ]; then
		echo
		write_taskbench
	fi
}

# write_taskbench: the Go benchmark BenchmarkTaskEngines as a table, each
# case's tasks/s beside the local pool's of the same run.
write_taskbench() {
	echo "In process (\`go test ./host -bench BenchmarkTaskEngines\`): 64 goroutines dispatch with"
	echo "\`Server().Task\` (each task stored by the engine before Task returns), at most 512"
	echo "tasks unfinished, ${TASK_BENCH_N:-20000} tasks a case; worker processes in coroutine mode."
	echo "JetStream: an embedded NATS server of the benchmark's own, its file store fsyncing"
	echo "every second (\`--nats-sync 1s\`) or every write (\`always\`, the default); \`2inst\`:"
	echo "two Apps sharing the server, 1 worker each, each dispatching half. Load average"
	echo "when it started: $TASKBENCH_LOAD."
	echo
	echo "| case | tasks/s | ÷ local pool |"
	echo "|---|---:|---:|"
	awk '{ name = $1; sub(/^BenchmarkTaskEngines\//, "", name); sub(/-[0-9]+$/, "", name)
		for (i = 2; i < NF; i++) if ($(i+1) == "tasks/s") v = $i
		names[++n] = name; vals[n] = v; if (name == "local-2w") base = v }
		END { for (i = 1; i <= n; i++) printf "| %s | %.0f | %s |\n", names[i], vals[i], (base > 0 ? sprintf("%.2f", vals[i] / base) : "-") }' <<<"$TASKBENCH"
}

write_shared() {
	echo
	echo "## 7. A shared package imported by every handler"
	echo
	echo "100 small handler files, each requested once (compiled on demand), without and"
	echo "with an import of a 300-line package of the application (\`lib/shared\`, generated"
	echo "funcs with loops and string building). Each file's interpreter compiles its own"
	echo "copy of the package, so its size is paid per loaded file."
	echo
	if want shared; then echo "$SHARED"; else not_run; fi
}

write_gobench() {
	echo
	if ! want gobench; then
		echo "## Go benchmarks"
		echo
		not_run
		return
	fi
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
	echo "## Go benchmark: WebSocket room broadcast"
	echo
	echo "A room of 10 WebSocket clients on loopback; \`one\`: App.Broadcast on the same"
	echo "instance, \`two\`: on another instance sharing a NATS server. msgs/s counts the"
	echo "messages the clients received."
	echo
	echo '```'
	echo "$LIVEBENCH"
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
}

write_raw() {
	echo
	echo "## Raw runs"
	echo
	for row in "${ROWS[@]}"; do
		IFS='|' read -r id _ server _ path _ _ <<<"$row"
		echo "- $server \`$path\`: ${RAW[$id]}"
	done
	if want tasks && [ -z "$TASK_NOTE" ]; then
		echo "- task round trip, local pool: ${RAW[task-rt]}"
		echo "- task round trip, NATS JetStream: ${RAW[task-rt-js]}"
	fi
	echo
	echo "## Commands"
	echo
	echo '```'
	echo "bench/run.sh   # from the repository root; BIN=$WORK/bin style temp dir, ROOT=a copy of bench/app"
	for c in "${CMDS[@]}"; do echo "$c"; done
	echo '```'
}

