#!/bin/sh
# bench/inproc.sh: the request path of `zealgo build`'s handlers against
# bare Echo's, in process (bench/cmd/ref/inproc/dispatch_test.go): no network, no
# net/http, the collector mostly out of the way (GOGC=4000).
#
#   bench/inproc.sh                 # BenchmarkBuilt, 2s per row, 3 rounds
#   BENCHTIME=5s COUNT=1 bench/inproc.sh
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)/bench/app
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go run ./bench/cmd/zbench build --root "$root" -o "$out/zbench" >/dev/null # generates $root/.zealgo/build
gen=$root/.zealgo/build
grep -v '^//go:build ignore' bench/cmd/ref/inproc/dispatch_test.go >"$gen/main/zz_inproc_test.go"
cd "$gen"
ZBENCH_ROOT=$root GOGC=4000 go test -run '^$' -bench BenchmarkBuilt \
    -benchtime "${BENCHTIME:-2s}" -count "${COUNT:-3}" ./main
