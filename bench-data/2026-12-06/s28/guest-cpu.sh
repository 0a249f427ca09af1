#!/bin/bash
# guest-cpu.sh BUILDDIR STORE ROWS [ROUNDS]: bench-STORE.sh's ROWS with
# the simulated guest on a CPU of its own, as a guest's vCPU is: the
# bench and all it starts (blkbackd, xensim, nbdkit or the Ceph
# daemons, fio) on CPU 0, every blkfront-test process moved to CPU 1 as
# soon as it is seen (every 50 ms; its first moments run on CPU 0).  fio
# and its server get CPU 0 alone; blkbackd and the same server get CPU 0
# alone, the frontend CPU 1.  Does the ring keep up with fio when the
# guest's work is not on the backend's CPUs?
B=$1 store=$2 rows=$3 rounds=${4:-5}
S=$(cd "$(dirname "$0")/../../.." && pwd)
( while :; do
	for p in $(pgrep -f "blkfront-test io"); do
		taskset -a -p -c 1 $p >/dev/null 2>&1
	done
	sleep 0.05
  done ) &
pinner=$!
BENCH_REPEAT=$rounds BENCH_ROWS="$rows" top_builddir=$B \
	taskset -c 0 $S/backend/bench-$store.sh 2>&1 | grep -v "ring slots"
kill $pinner
