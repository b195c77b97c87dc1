# shellcheck shell=bash
# bench/ports.sh — ports on 127.0.0.1 for the benchmark scripts, sourced by
# run.sh and pinned.sh. wait_port logs with the sourcing script's log.

# free_port prints a port nothing listens on.
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
