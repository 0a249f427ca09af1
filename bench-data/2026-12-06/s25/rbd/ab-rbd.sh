#!/bin/bash
# A/B: the rbd store module before (old: 5117d08) and after (new) the one-signal-per-batch change, randread row, rotating order
cd /work/main
one() { echo "== $1 $(date -u +%T)"; BENCH_REV=$1 BENCH_ROWS="${ROWS:-randread-4k-qd32}" BLKBACKD_STORE_DIR=$2 top_builddir=/work/b-plain backend/bench-rbd.sh 2>&1 | grep -v "^blkfront-test"; }
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then one old /work/s25/mod-old; one new /work/b-plain/backend/.libs
  else one new /work/b-plain/backend/.libs; one old /work/s25/mod-old; fi
done
