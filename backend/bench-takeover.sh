#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-takeover.sh: how long a guest's I/O pauses while blkbackd is
# upgraded (blkbackd-ctl upgrade: the same process execs the program
# again) and restarted (SIGTERM, a new blkbackd), both taking the vbd over
# as it stands ("make -C backend bench"; BENCHMARKS.md).  Never part of
# make check.
#
# Each event happens 0.5 s into a 1.5 s run of blkfront-test io (4 KiB
# random writes at queue depth 1 on a file, so one request is always in
# flight or about to be): the run's longest request latency is the pause
# the guest saw.  Output: one line per event, then median and max of
# each kind.  Knobs: BENCH_TAKEOVERS (events of each kind, default 11),
# BENCH_DIR (default /var/tmp).
set -euo pipefail
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
n=${BENCH_TAKEOVERS:-11}
dir=$(mktemp -d "${BENCH_DIR:-/var/tmp}/bk-takeover.XXXXXX")
sim=$dir/sim
mkdir -p "$sim"
pids=()
cleanup() {
	local p
	for (( i=${#pids[@]}-1; i>=0; i-- )); do
		kill "${pids[$i]}" 2>/dev/null && wait "${pids[$i]}" 2>/dev/null || true
	done
	rm -rf "$dir"
}
trap cleanup EXIT
export XENSTORED_PATH=$sim/xenstore.sock XENSIM_DIR=$sim
"$top_builddir/sim/xensim" --dir "$sim" --pidfile "$sim/xensim.pid" 2>/dev/null &
pids+=($!)
for (( i=0; i<100; i++ )); do [ -s "$sim/xensim.pid" ] && break; sleep 0.1; done
dom=$("$top_builddir/sim/xensim-ctl" --dir "$sim" create-domain bench)
front="$top_builddir/frontend-test/blkfront-test"
bk="$top_builddir/backend/blkbackd"
ctl="$top_builddir/backend/blkbackd-ctl"
start_bk() {
	rm -f "$dir/bk.pid"
	"$bk" -f --transport=sim --sim-dir="$sim" --pidfile="$dir/bk.pid" >/dev/null 2>>"$dir/bk.log" &
	pids+=($!)
	for (( i=0; i<100; i++ )); do [ -s "$dir/bk.pid" ] && break; sleep 0.05; done
}
truncate -s 64M "$dir/disk.img"
start_bk
"$front" xl-add --domid "$dom" --params "$dir/disk.img" >/dev/null
rev=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# blkbackd takeover pause, git $rev, $(nproc) CPUs, $n events of each kind"
# event KIND: one run with the event in it; the longest latency (ms)
# into $dir/pause (not printed: a daemon started here must not hold a
# command substitution's pipe)
event() {
	"$front" io --sim-dir "$sim" --domid "$dom" --rw randwrite --bs 4k --iodepth 1 \
		--size 64M --runtime 1.5 --timeout 20000 --output-format json > "$dir/io.json" &
	local io=$!
	sleep 0.5
	case $1 in
	upgrade) "$ctl" upgrade "$bk" >/dev/null ;;
	restart) local old
		 old=$(cat "$dir/bk.pid")
		 kill -TERM "$old"
		 wait "$old" || true	# reaped: its instance lock is free
		 start_bk ;;
	esac
	wait $io
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['errors']==0, d; print('%.1f' % (d['lat_us']['max']/1000))" "$dir/io.json" > "$dir/pause"
}
median() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
for kind in upgrade restart; do
	v=()
	for (( k=0; k<n; k++ )); do
		event $kind
		v+=("$(cat "$dir/pause")")
		echo "takeover=$kind pause_ms=${v[-1]}"
	done
	echo "pause $kind ms: median $(median "${v[@]}") max $(printf '%s\n' "${v[@]}" | sort -g | tail -1) over $n"
done
grep -c "taken over" "$dir/bk.log" | sed 's/^/# takeovers logged: /'
