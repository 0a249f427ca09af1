#!/bin/bash
# The rbd randread row with the CPUs split: every client process (the
# bench script's children: blkbackd, blkfront-test, fio) on CPU 0, the
# Ceph daemons moved to CPU 1 as soon as they start.  Is the ring's gap
# the way two clients share two CPUs with the OSD?
B=${B:-/work/b-plain}
S=${S:-/work/main}
rows=${ROWS:-randread-4k-qd32}
( while :; do
	for p in $(pgrep -x ceph-osd) $(pgrep -x ceph-mon) $(pgrep -x ceph-mgr); do
		taskset -a -p -c 1 $p >/dev/null 2>&1
	done
	sleep 0.5
  done ) &
pinner=$!
BENCH_REPEAT=5 BENCH_ROWS="$rows" BLKBACKD_STORE_DIR=$B/backend/.libs top_builddir=$B \
	taskset -c 0 $S/backend/bench-rbd.sh 2>&1 | grep -v "ring slots"
kill $pinner
