#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-syscalls.sh: blkbackd's system calls per request, by I/O engine
# ("make -C backend bench-syscalls"; BENCHMARKS.md "io_uring").  Never
# part of make check.
#
# For each engine (libaio, io_uring), each workload (4 KiB randread and
# randwrite) and each queue depth (1, 32): a fresh blkbackd on a file
# (O_DIRECT on BENCH_DIR's file system, completions asynchronous as on a
# block device), blkfront-test io through the ring for BENCH_SECONDS,
# and `strace -f -c` attached to blkbackd for the run.  One line per
# run: the calls per request in total and for each call that made at
# least 0.01 per request.  The rounds rotate the engines' order.
# IOPS under strace mean nothing; the counts do.
# Knobs: BENCH_ENGINES (default "libaio io_uring"; an io_uring entry may
# name the queues' wait mode, e.g. "io_uring/eventfd io_uring/ring",
# blkbackd's BLKBACKD_URING_WAIT), BENCH_ROUNDS (2),
# BENCH_SECONDS (4), BENCH_SIZE (256M), BENCH_DIR (/var/tmp),
# BENCH_BACKEND_ARGS (e.g. --poll-max-us=0: no polling, as blkbackd
# chooses in a PV dom0), BENCH_FRONT_ARGS (blkfront-test's, e.g.
# "--poll-max-us 0": a guest that sleeps until its response's event, as
# an interrupt-driven kernel does, instead of polling the ring for 50 us).
# BENCH_OUT: keep each run's strace table there.
set -euo pipefail
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
engines=(${BENCH_ENGINES:-libaio io_uring})
rounds=${BENCH_ROUNDS:-2}
secs=${BENCH_SECONDS:-4}
size=${BENCH_SIZE:-256M}
command -v strace >/dev/null || { echo "bench-syscalls: strace not installed"; exit 1; }
command -v fio >/dev/null || { echo "bench-syscalls: fio not installed"; exit 1; }
dir=$(mktemp -d "${BENCH_DIR:-/var/tmp}/bk-sysc.XXXXXX")
sim=$dir/sim
mkdir -p "$sim"
pids=()
cleanup() {
	local i
	for (( i=${#pids[@]}-1; i>=0; i-- )); do
		kill "${pids[$i]}" 2>/dev/null && wait "${pids[$i]}" 2>/dev/null || true
	done
	rm -rf "$dir"
}
trap cleanup EXIT
img=$dir/disk.img
fio --name=prep --filename="$img" --size="$size" --rw=write --bs=1M --direct=1 \
	--ioengine=libaio --iodepth=8 --output=/dev/null
export XENSTORED_PATH=$sim/xenstore.sock
"$top_builddir/sim/xensim" --dir "$sim" --pidfile "$sim/xensim.pid" 2>/dev/null &
pids+=($!)
for (( i=0; i<100; i++ )); do [ -s "$sim/xensim.pid" ] && break; sleep 0.1; done
dom=$("$top_builddir/sim/xensim-ctl" --dir "$sim" create-domain bench)
front="$top_builddir/frontend-test/blkfront-test"
rev=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# blkbackd system calls per request, git $rev, $(nproc) CPUs, file $size on" \
	"$(df --output=fstype "$dir" | tail -1), $secs s per run, blkbackd ${BENCH_BACKEND_ARGS:-(defaults)}," \
	"blkfront-test ${BENCH_FRONT_ARGS:-(defaults)}"

one() { # ENGINE[/WAIT] RW QD
	local engine=${1%%/*} wait= rw=$2 qd=$3 bk st ios
	[ "$engine" = "$1" ] || wait=${1#*/}
	rm -f "$dir/bk.pid"
	BLKBACKD_URING_WAIT=$wait "$top_builddir/backend/blkbackd" -f --transport=sim --sim-dir="$sim" \
		--io-engine="$engine" ${BENCH_BACKEND_ARGS:-} --pidfile="$dir/bk.pid" 2>>"$dir/bk.log" &
	bk=$!
	pids+=($bk)
	for (( i=0; i<100; i++ )); do [ -s "$dir/bk.pid" ] && break; sleep 0.1; done
	"$front" xl-add --domid "$dom" --params "$img" >/dev/null
	strace -f -c -o "$dir/strace" -p "$bk" &
	st=$!
	sleep 0.5	# strace attached to every thread
	"$front" io --sim-dir "$sim" --domid "$dom" --ring-order 2 --max-indirect 32 \
		--rw "$rw" --bs 4k --iodepth "$qd" --size "$size" --runtime "$secs" \
		${BENCH_FRONT_ARGS:-} --output-format json > "$dir/io.json"
	kill -INT "$st"; wait "$st" || true
	"$front" xl-remove --domid "$dom" >/dev/null
	kill "$bk"; wait "$bk" || true
	ios=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['ios'])" "$dir/io.json")
	[ -z "${BENCH_OUT:-}" ] || cp "$dir/strace" "$BENCH_OUT/strace-${1//\//-}-$rw-qd$qd-$round.txt"
	python3 - "$dir/strace" "$ios" "$1" "$rw" "$qd" <<'EOP'
import sys
path, ios, engine, rw, qd = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
calls = {}
for line in open(path):
    f = line.split()
    # % time, seconds, usecs/call, calls, [errors], syscall
    if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
        calls[f[-1]] = int(f[3])
total = sum(calls.values())
top = " ".join("%s=%.2f" % (k, v / ios) for k, v in sorted(calls.items(), key=lambda kv: -kv[1])
               if v / ios >= 0.01)
print("engine=%s rw=%s iodepth=%s ios=%d calls_per_req=%.2f %s" % (engine, rw, qd, ios, total / max(ios, 1), top))
EOP
}

for (( round=0; round<rounds; round++ )); do
	order=("${engines[@]}")
	(( round % 2 )) && order=($(printf '%s\n' "${engines[@]}" | tac))
	for rw in randread randwrite; do
		for qd in 1 32; do
			for e in "${order[@]}"; do
				one "$e" "$rw" "$qd"
			done
		done
	done
done
