#!/bin/bash
# A/B: bench-nbd.sh (3 rounds, all rows) with blkbackd built at 8827e29
# (before the shared connection's lock) and at ceb1337+ (/work/b-plain,
# HEAD's code), alternating, two invocations each; the script is HEAD's.
out=/work/s29/nbd-ab.txt
for i in 1 2; do
  for v in base new; do
    case $v in base) tb=/work/s29/base-build ;; new) tb=/work/b-plain ;; esac
    echo "=== invocation $i $v $(date -u +%T) $tb" >> $out
    top_builddir=$tb BENCH_REPEAT=3 BENCH_REV=$v /work/main/backend/bench-nbd.sh >> $out 2>&1
  done
done
echo DONE >> $out
