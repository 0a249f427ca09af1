#!/bin/bash
# Per-thread CPU during the nbd randwrite 4 KiB row (ring and fio): is
# blkbackd's queue thread busy all the time, or does it sleep?  Samples
# /proc/PID/task/*/stat 3 s apart in the middle of each 5 s run.
B=${B:-/work/b-plain}
S=${S:-/work/main}
BENCH_REPEAT=1 BENCH_ROWS=randwrite-4k-qd32 top_builddir=$B $S/backend/bench-nbd.sh &
bench=$!
sample() { # label pid...
	local label=$1 p t
	shift
	for p in "$@"; do
		for t in /proc/$p/task/*; do
			echo "$label $(cat $t/comm) $(awk '{print $14+$15}' $t/stat 2>/dev/null)"
		done
	done
}
seen=
while kill -0 $bench 2>/dev/null; do
	io=$(pgrep -f "blkfront-test io .*randwrite" | head -1)
	f=$(pgrep -x fio | head -1)
	bk=$(pgrep -x blkbackd | head -1)
	nk=$(pgrep -x nbdkit | head -1)
	if [ -n "$io" ] && [[ $seen != *"io$io "* ]]; then
		seen+="io$io "
		mode=ring; tr '\0' ' ' < /proc/$io/cmdline | grep -q in-place && mode=ring-inplace
		sleep 1; sample "$mode-t0" $bk $nk $io > /tmp/t0; sleep 3; sample "$mode-t1" $bk $nk $io > /tmp/t1
		cat /tmp/t0 /tmp/t1
	elif [ -n "$f" ] && [[ $seen != *"fio$f "* ]]; then
		seen+="fio$f "
		sleep 1; sample fio-t0 $f $nk > /tmp/t0; sleep 3; sample fio-t1 $f $nk > /tmp/t1
		cat /tmp/t0 /tmp/t1
	fi
	sleep 0.1
done
wait $bench
