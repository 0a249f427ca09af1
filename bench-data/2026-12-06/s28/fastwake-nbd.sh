#!/usr/bin/env bash
# fastwake-nbd.sh BUILDDIR OUT ROUNDS: bench-nbd.sh's randwrite row twice,
# ROUNDS rounds each: as is, then with a SCHED_IDLE busy loop on every
# CPU (bench.sh's "fast-wake" section: the vCPUs never halt, so a woken
# thread runs in ~13 us instead of ~26; the loops yield to any thread at
# once, and their time counts in host_us_per_req, so read the ratio).
# Does the ring's deficit on this row come from its extra wake-ups?
set -u
b=$1 out=$2 rounds=${3:-5}
src=$(cd "$(dirname "$0")/../../.." && pwd)
run() { top_builddir=$b BENCH_ROWS=randwrite-4k-qd32 BENCH_REPEAT=$rounds \
	"$src/backend/bench-nbd.sh" 2>&1 | grep -v '^blkfront-test'; }
echo "## as is, $(date -u +%T)"
run
echo "## SCHED_IDLE loops on every CPU, $(date -u +%T)"
sp=()
for c in $(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))'); do
	chrt --idle 0 taskset -c "$c" sh -c 'while :; do :; done' &
	sp+=($!)
done
run
kill "${sp[@]}"
echo "## end $(date -u +%T)"
