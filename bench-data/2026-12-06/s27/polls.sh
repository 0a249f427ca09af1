#!/bin/bash
# A/B/C: the poll windows on the rbd randread row.  default: blkbackd
# and blkfront-test poll up to 50 us (adaptive); bk0: blkbackd
# --poll-max-us=0; both0: and blkfront-test --poll-max-us 0.  Modes
# rotate; each bench run gives its own ring/fio ratio (run under flock
# -x /work/heavy.lock).
set -u
B=${B:-/work/b-plain}
S=${S:-/work/main}
rows=${ROWS:-randread-4k-qd32}
modes=(default bk0 both0)
for i in 0 1; do
	for j in 0 1 2; do
		mode=${modes[(i + j) % 3]}
		echo "=== $mode $i $(date +%T) git $(git -C $S rev-parse --short HEAD) load $(cut -d' ' -f1-3 /proc/loadavg)"
		case $mode in
		default) ba= fa= ;;
		bk0) ba=--poll-max-us=0 fa= ;;
		both0) ba=--poll-max-us=0 fa="--poll-max-us 0" ;;
		esac
		BENCH_REPEAT=5 BENCH_ROWS="$rows" BENCH_BACKEND_ARGS="$ba" BENCH_FRONT_ARGS="$fa" \
			BLKBACKD_STORE_DIR=$B/backend/.libs top_builddir=$B $S/backend/bench-rbd.sh 2>&1 |
			grep -v "ring slots"
	done
done
