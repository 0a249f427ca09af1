#!/bin/bash
# System calls per write on nbd's 4 KiB randwrite row without strace:
# perf stat on the syscall tracepoints (cheap) for 3 s in the middle of
# the copying ring run (blkbackd) and of the fio run (its job process).
B=${B:-/work/b-plain}
S=${S:-/work/main}
out=${1:?outdir}
ev=syscalls:sys_enter_write,syscalls:sys_enter_recvfrom,syscalls:sys_enter_poll,syscalls:sys_enter_sendto,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_read,syscalls:sys_enter_timerfd_settime
BENCH_REPEAT=1 BENCH_ROWS=randwrite-4k-qd32 top_builddir=$B $S/backend/bench-nbd.sh > "$out/perfstat-nbd-bench.txt" 2>&1 &
bench=$!
done_ring= done_fio=
while kill -0 $bench 2>/dev/null; do
	if [ -z "$done_ring" ] && pgrep -f "blkfront-test io .*randwrite" >/dev/null &&
	   ! pgrep -f "blkfront-test io .*in-place" >/dev/null; then
		done_ring=1
		sleep 1
		perf stat -e "$ev" -p "$(pgrep -x blkbackd | head -1)" -o "$out/perfstat-nbd-ring.txt" -- sleep 3
	elif [ -z "$done_fio" ] && pgrep -f "fio --name=nbd-randwrite" >/dev/null; then
		done_fio=1
		sleep 1
		# fio runs its job in a child process, the newest of them
		perf stat -e "$ev" -p "$(pgrep -f "fio --name=nbd-randwrite" | tail -1)" -o "$out/perfstat-nbd-fio.txt" -- sleep 3
	fi
	sleep 0.1
done
wait $bench
