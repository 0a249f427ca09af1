#!/bin/bash
# perfstat-procs.sh BUILDDIR OUTDIR: nbd's 4 KiB randwrite row, one
# round; 3 s in the middle of the copying ring run and of the fio run,
# perf stat (system calls, context switches, CPU migrations: counters
# that barely slow a thread, unlike strace) on each process of the path
# at once: nbdkit and blkbackd and blkfront-test, or nbdkit and fio's
# job process.  Requests in the window: the run's IOPS x 3 s.
B=$1 out=$2
S=$(cd "$(dirname "$0")/../../.." && pwd)
ev=raw_syscalls:sys_enter,context-switches,cpu-migrations,task-clock
BENCH_REPEAT=1 BENCH_WARMUP=0 BENCH_ROWS=randwrite-4k-qd32 top_builddir=$B \
	$S/backend/bench-nbd.sh > "$out/perfstat-procs-bench.txt" 2>&1 &
bench=$!
done_ring= done_fio=
ps=()
st() { perf stat -e "$ev" -p "$2" -o "$out/perfstat-procs-$1.txt" -- sleep 3 & ps+=($!); }
while kill -0 $bench 2>/dev/null; do
	if [ -z "$done_ring" ] && pgrep -f "blkfront-test io .*randwrite" >/dev/null &&
	   ! pgrep -f "blkfront-test io .*in-place" >/dev/null; then
		done_ring=1
		sleep 1
		st ring-nbdkit "$(pgrep -x nbdkit | head -1)"
		st ring-blkbackd "$(pgrep -x blkbackd | head -1)"
		st ring-frontend "$(pgrep -f "blkfront-test io .*randwrite" | tail -1)"
		wait "${ps[@]}"; ps=()
	elif [ -z "$done_fio" ] && pgrep -f "fio --name=nbd-randwrite" >/dev/null; then
		done_fio=1
		sleep 1
		st fio-nbdkit "$(pgrep -x nbdkit | head -1)"
		st fio-fio "$(pgrep -f "fio --name=nbd-randwrite" | tail -1)"
		wait "${ps[@]}"; ps=()
	fi
	sleep 0.1
done
wait $bench
