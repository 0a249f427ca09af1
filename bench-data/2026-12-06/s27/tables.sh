#!/bin/bash
# Issue 30's two tables at one revision, 7 alternating rounds each (run
# under flock -x /work/heavy.lock with nothing else heavy): the rbd rows
# then the nbd rows, plain build (-O2, no sanitizers).
set -u
B=${B:-/work/b-plain}
S=${S:-/work/main}
out=${1:?outdir}
for t in rbd nbd; do
	echo "git $(git -C $S rev-parse --short HEAD) start $(date) load $(cut -d' ' -f1-3 /proc/loadavg)"
	BENCH_REPEAT=7 BLKBACKD_STORE_DIR=$B/backend/.libs top_builddir=$B \
		$S/backend/bench-$t.sh
	echo "end $(date) load $(cut -d' ' -f1-3 /proc/loadavg)"
done > "$out/tables-$(git -C $S rev-parse --short HEAD).txt" 2>&1
