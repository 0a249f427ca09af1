#!/bin/bash
# A/B: rbd_non_blocking_aio=false on blkbackd's librbd client only, alternating invocations
cd /work/b-plain || exit 1
out=/work/s29/nbaio.txt
for i in 1 2; do
  for v in default nbfalse; do
    echo "=== invocation $i $v $(date -u +%T)" >> $out
    if [ $v = nbfalse ]; then export BENCH_RBD_PARAMS=rbd_non_blocking_aio=false; else unset BENCH_RBD_PARAMS; fi
    top_builddir=/work/b-plain BENCH_REPEAT=5 BENCH_ROWS="randread-4k-qd32 randwrite-4k-qd32" BENCH_REV=73b85be+nbaio \
      /work/main/backend/bench-rbd.sh >> $out 2>&1
  done
done
echo DONE >> $out
