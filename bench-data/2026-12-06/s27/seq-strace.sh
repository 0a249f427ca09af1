#!/bin/bash
B=/work/b-plain; S=/work/main; out=/work/s27
BENCH_REPEAT=1 BENCH_SECONDS=4 BENCH_ROWS=randwrite-4k-qd32 top_builddir=$B $S/backend/bench-nbd.sh > $out/seq-bench.txt 2>&1 &
bench=$!
while kill -0 $bench 2>/dev/null; do
	if pgrep -f "blkfront-test io .*randwrite" >/dev/null; then
		sleep 1
		timeout -s INT 0.3 strace -f -tt -e trace=poll,recvfrom,sendto,write,epoll_wait,read -p "$(pgrep -x blkbackd | head -1)" -o $out/seq-strace.txt
		break
	fi
	sleep 0.1
done
wait $bench
