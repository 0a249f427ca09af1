#!/bin/bash
# threads-rbd.sh BUILDDIR OUT: per-thread CPU during bench-rbd.sh's
# randread row (one round: ring, ring-inplace, fio).  In the middle of
# each 5 s run, /proc/PID/task/*/stat of the client (blkbackd and the
# frontend, or fio) and of the OSD, 3 s apart; printed as CPU share per
# thread (1.0 = one CPU all the time), busiest first.  Is one of
# librbd's threads a CPU's worth, the bound of both clients?
B=$1 out=$2
S=$(cd "$(dirname "$0")/../../.." && pwd)
BENCH_REPEAT=1 BENCH_WARMUP=0 BENCH_ROWS=randread-4k-qd32 top_builddir=$B \
	$S/backend/bench-rbd.sh > "$out.bench" 2>&1 &
bench=$!
hz=$(getconf CLK_TCK)
sample() { # pid...
	local p t
	for p in "$@"; do
		for t in /proc/$p/task/*; do
			echo "$(cat /proc/$p/comm)/$(cat $t/comm)/${t##*/} $(awk '{print $14+$15}' $t/stat 2>/dev/null)"
		done
	done
}
share() { # label t0-file t1-file
	join <(sort "$2") <(sort "$3") |
		awk -v l="$1" -v hz="$hz" '{ s = ($3 - $2) / hz / 3; if (s > 0.005) printf "%s %s %.3f\n", l, $1, s }' |
		sort -k3 -rn
}
seen=
: > "$out"
while kill -0 $bench 2>/dev/null; do
	io=$(pgrep -x blkfront-test | head -1)
	f=$(pgrep -f "fio --name=rbd-randread" | tail -1)
	bk=$(pgrep -x blkbackd | head -1)
	osd=$(pgrep -x ceph-osd | head -1)
	if [ -n "$io" ] && [[ $seen != *"io$io "* ]]; then
		seen+="io$io "
		mode=ring; tr '\0' ' ' < /proc/$io/cmdline | grep -q in-place && mode=ring-inplace
		sleep 1; sample $bk $osd $io > /tmp/t0; sleep 3; sample $bk $osd $io > /tmp/t1
		share $mode /tmp/t0 /tmp/t1 >> "$out"
	elif [ -n "$f" ] && [[ $seen != *"fio$f "* ]]; then
		seen+="fio$f "
		sleep 1; sample $f $osd > /tmp/t0; sleep 3; sample $f $osd > /tmp/t1
		share fio /tmp/t0 /tmp/t1 >> "$out"
	fi
	sleep 0.1
done
wait $bench
