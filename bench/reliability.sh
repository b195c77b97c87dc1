#!/usr/bin/env bash
# bench/reliability.sh — what it costs when a handler tries to take zealgo
# down: crash vectors fired one at a time at `zealgo serve` (under its
# supervisor) while background clients keep requesting, writing rows and
# dispatching tasks. Writes bench/RELIABILITY.md. See bench/README.md.
#
#   bench/reliability.sh             # about a minute
#
# The server listens on 127.0.0.1 only, on a free port; the driver stops it
# with SIGTERM by its PID and kills, by PID, anything it leaves.
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$(pwd)
OUT=${OUT:-$REPO/bench/RELIABILITY.md}

log() { printf '[reliability] %s\n' "$*" >&2; }

WORK=$(mktemp -d /tmp/zealgo-reliability.XXXXXX)
DRIVER_PID=""
cleanup() {
	if [ -n "$DRIVER_PID" ]; then
		kill "$DRIVER_PID" 2>/dev/null || true
		wait "$DRIVER_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

log "building"
go build -o "$WORK/zealgo" ./cmd/zealgo
go build -o "$WORK/reliability" ./bench/cmd/reliability

DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
NPROC=$(nproc)
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

log "running the vectors"
"$WORK/reliability" -bin "$WORK/zealgo" >"$WORK/table.md" &
DRIVER_PID=$!
wait "$DRIVER_PID"
DRIVER_PID=""

{
	echo "# Reliability"
	echo
	echo "Written by \`bench/reliability.sh\` (driver: \`bench/cmd/reliability\`). Each vector is a request to a"
	echo "handler file that tries to end the server (or a \`kill -9\` of the serving process), fired while"
	echo "background clients keep working; \"served again after\" runs from the failed request's end to the"
	echo "first answer of the new process. See the README's \"Crash isolation\" section for the design."
	echo
	echo "| | |"
	echo "|---|---|"
	echo "| date | $DATE |"
	echo "| machine | \`nproc\` = $NPROC, $CPU, load averages before the run $LOAD (shared with other work) |"
	echo "| go | $(go version | cut -d' ' -f3-) |"
	echo "| command | \`bench/reliability.sh\` |"
	echo
	cat "$WORK/table.md"
} >"$OUT"
log "wrote $OUT"
