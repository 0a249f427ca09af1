#!/bin/bash
# bench-rbd.sh with every run on a new image (BENCH_RBD_FRESH=1, the new default), 5 rounds, all rows
cd /work/b-plain || exit 1
top_builddir=/work/b-plain BENCH_REPEAT=5 BENCH_REV=${REV:-?} /work/main/backend/bench-rbd.sh > /work/s29/fresh-${REV:-x}.txt 2>&1
echo DONE >> /work/s29/fresh-${REV:-x}.txt
