#!/usr/bin/env bash
# inflight.sh BUILDDIR OUT [STORE ROW]: bench-STORE.sh's ROW (default
# rbd randread-4k-qd32; BENCH_REPEAT rounds) with a sampler beside it: every 0.5 s, blkbackd-ctl stats
# --json (lat_sum_ns: each response's time since its request was taken
# from the ring; rd_req).  Over a window, d(lat_sum_ns)/d(t) is the mean
# number of requests inside blkbackd (taken, not yet answered: at librbd
# or queued for it), by Little's law; the frontend keeps 32 in flight.
set -u
b=$1 out=$2 store=${3:-rbd} row=${4:-randread-4k-qd32}
: > "$out.samples"
(
	while :; do
		sock=$(ls /var/tmp/bk-bench-$store.*/sim/xenstore.sock.blkbackd-0.ctl 2>/dev/null | head -1)
		[ -n "$sock" ] && s=$("$b/backend/blkbackd-ctl" -s "$sock" stats --json 2>/dev/null) &&
			echo "$(date +%s.%N) $s" >> "$out.samples"
		sleep 0.5
	done
) &
sp=$!
top_builddir=$b BENCH_ROWS=$row BENCH_REPEAT=${BENCH_REPEAT:-3} \
	"$(dirname "$0")/../../../backend/bench-$store.sh" > "$out" 2>&1
kill $sp
