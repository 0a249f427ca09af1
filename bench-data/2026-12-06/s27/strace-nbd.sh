#!/bin/bash
# System calls of blkbackd (ring, copying frontend) and of fio's job
# process during the nbd randwrite 4 KiB row, 3 s of strace -c -f each
# in the middle of a run; read them per reply received (one recvfrom per
# 4 KiB write's reply on both paths).  strace slows both: counts only.
B=${B:-/work/b-plain}
S=${S:-/work/main}
out=${1:?outdir}
BENCH_REPEAT=1 BENCH_ROWS=randwrite-4k-qd32 top_builddir=$B $S/backend/bench-nbd.sh > "$out/strace-nbd-bench.txt" 2>&1 &
bench=$!
done_ring= done_fio=
while kill -0 $bench 2>/dev/null; do
	if [ -z "$done_ring" ] && pgrep -f "blkfront-test io .*randwrite" >/dev/null; then
		done_ring=1
		sleep 1
		timeout -s INT 3 strace -c -f -p "$(pgrep -x blkbackd | head -1)" -o "$out/strace-nbd-ring.txt"
	elif [ -z "$done_fio" ] && pgrep -f "fio --name=nbd-randwrite" >/dev/null; then
		done_fio=1
		sleep 1
		# fio runs its job in a child process, the newest of them
		f=$(pgrep -f "fio --name=nbd-randwrite" | tail -1)
		for p in $(pgrep -f "fio --name=nbd-randwrite"); do
			echo "$p: $(tr '\0' ' ' < /proc/$p/cmdline | cut -c1-60) cpu $(awk '{print $14+$15}' /proc/$p/stat)"
		done > "$out/strace-nbd-fio-procs.txt"
		timeout -s INT 3 strace -c -f -p "$f" -o "$out/strace-nbd-fio.txt"
	fi
	sleep 0.1
done
wait $bench
