#!/bin/bash
# A flat profile of blkbackd (its queue thread is the only busy one)
# for 3 s in the middle of the nbd randwrite 4 KiB row's first ring run
# (the copying frontend), and of fio's job process in its run.
B=${B:-/work/b-plain}
S=${S:-/work/main}
out=${1:?outdir}
BENCH_REPEAT=1 BENCH_ROWS=randwrite-4k-qd32 top_builddir=$B $S/backend/bench-nbd.sh > "$out/perf-nbd-bench.txt" 2>&1 &
bench=$!
done_ring= done_fio=
while kill -0 $bench 2>/dev/null; do
	if [ -z "$done_ring" ] && pgrep -f "blkfront-test io .*randwrite" >/dev/null; then
		done_ring=1
		sleep 1
		perf record -q -F 999 -g -p "$(pgrep -x blkbackd | head -1)" -o "$out/perf-nbd-ring.data" -- sleep 3 2>/dev/null
	elif [ -z "$done_fio" ] && [ "$(pgrep -x fio | wc -l)" -ge 2 ]; then
		done_fio=1
		sleep 1
		perf record -q -F 999 -g -p "$(pgrep -x fio | tail -1)" -o "$out/perf-nbd-fio.data" -- sleep 3 2>/dev/null
	fi
	sleep 0.1
done
wait $bench
for w in ring fio; do
	perf report -i "$out/perf-nbd-$w.data" --no-children --sort dso,sym --percent-limit 0.7 --stdio 2>/dev/null |
		grep -v '^$' | grep -v '^ *|' | grep -v -- '---' > "$out/perf-nbd-$w.txt"
	rm -f "$out/perf-nbd-$w.data"
done
