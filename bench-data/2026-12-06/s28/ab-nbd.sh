#!/usr/bin/env bash
# ab-nbd.sh BUILDDIR OUT PAIRS ROW A-STOREDIR B-STOREDIR: bench-nbd.sh's
# ROW, BENCH_REPEAT (3) rounds per run, PAIRS times with store-nbd.so
# from A then B, the first of each pair alternating (A B, B A, ...):
# the same blkbackd binary, two nbd store modules.
set -u
b=$1 out=$2 pairs=$3 row=$4 A=$5 B=$6
src=$(cd "$(dirname "$0")/../../.." && pwd)
run() { echo "## $1 $(date -u +%T)"
	BLKBACKD_STORE_DIR=$2 top_builddir=$b BENCH_ROWS=$row BENCH_REPEAT=${BENCH_REPEAT:-3} \
		"$src/backend/bench-nbd.sh" 2>&1 | grep -v '^blkfront-test'; }
for (( p=0; p<pairs; p++ )); do
	if (( p % 2 == 0 )); then run A "$A"; run B "$B"; else run B "$B"; run A "$A"; fi
done > "$out"
