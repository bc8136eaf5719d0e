#!/bin/sh
# benchpairs.sh runs the SDK's benchmark pairs, each SDK side against its
# floor (raw net/http + encoding/json, a bare PUT, separate waits), and
# summarises them with benchstat. See BENCHMARKS.md for what each pair
# measures and the figures.
#
#   scripts/benchpairs.sh            # 6 runs of each pair
#   COUNT=10 scripts/benchpairs.sh   # more runs
#   OUT=/tmp/pairs.txt scripts/benchpairs.sh
#
# The client and upload pairs alternate their sides inside each benchmark
# (internal/benchpair), so their ratios do not depend on the order of the
# runs. The poll pair counts requests on a fake clock: one run is exact.
set -eu
cd "$(dirname "$0")/.."
count=${COUNT:-6}
out=${OUT:-bench-pairs.txt}
: >"$out"
go test -run '^$' -bench '^BenchmarkPair' -benchtime 3000x -count "$count" ./client/ | tee -a "$out"
go test -run '^$' -bench '^BenchmarkPairUpload30MB$' -benchtime 6x -count "$count" ./upload/ | tee -a "$out"
go test -run '^$' -bench '^BenchmarkPairVideoWaits$' -benchtime 1x -count 1 ./poll/ | tee -a "$out"
go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$out"
