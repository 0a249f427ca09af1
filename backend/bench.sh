#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench.sh: blkbackd through the ring vs fio on the same file, same run
# ("make -C backend bench"; see BENCHMARKS.md).  Never part of make check.
#
#   4 KiB random read, QD32  (blkfront-test io vs fio libaio O_DIRECT)
#   1 MiB sequential write   (same)
#   null store, 4 KiB reads, 1 and 2 queues, QD 1/32/128 (the ring's own
#   cost: no disk at all; requests/s and CPU per request)
#
# Every ring row also says what it cost in CPU: blkbackd's CPU time
# (user + system, from /proc) per request ("bk_us_per_req") and the
# frontend's ("fe_us_per_req"); fio rows say fio's own.  Speed bought with
# a spinning core shows there.  Every row also says what the whole
# machine spent ("host_us_per_req": busy time of all CPUs, interrupts
# included, from /proc/stat, per request) and how busy it was
# ("host_busy_pct", 100 = every CPU busy): where the reference already
# keeps every CPU busy, the ring's row is bound by CPU, and its ratio
# can be no better than fio's host_us_per_req over its own.  These
# count every process (run on an otherwise idle machine), include the
# start and stop of each run, and leave out steal time (a VM's CPUs
# taken by its host).
# Output: one line per measurement, key=value, then the ratios of the
# medians.  Ring and fio runs alternate, BENCH_REPEAT times each, the
# first of each round alternating too: the host disk's speed drifts by
# 2x within minutes here, so one run each would compare two different
# disks, and a fixed order would give one contender the same place in
# every drift.
# Knobs (environment): BENCH_SIZE (backing file, default 512M),
# BENCH_SECONDS (per run, default 5), BENCH_REPEAT (default 3), BENCH_DIR
# (default /var/tmp; the file system to test), BENCH_SEQ_QD (1 MiB I/Os in
# flight, default 4), BENCH_BACKEND_ARGS / BENCH_FRONT_ARGS (extra
# options), BENCH_POLL_US (the polled row's --poll-max-us, default 1000),
# BENCH_SECTIONS (which of "default polled fe-polled fast-wake null" to
# run, default all; e.g. BENCH_SECTIONS=default with
# BENCH_BACKEND_ARGS=--io-engine=libaio to compare the I/O engines).
#
# The 4 KiB job runs twice: with the default polling windows (50 us), and
# with both sides polling up to BENCH_POLL_US ("polled": blkbackd's queue
# thread and blkfront-test io's submitting thread each keep one CPU busy
# while I/O is in flight, trading CPU for the ~58 us cross-CPU wake-ups
# of this machine; see blkbackd(8) --poll-max-us).  A third run polls in
# the frontend only: blkbackd as configured by default, served by a
# frontend that answers about as fast as Linux blkfront's interrupt
# handler would, so what remains of the default row's gap is blkbackd's
# own sleeping (BENCHMARKS.md has what it showed).  A fourth runs
# the default again with every CPU kept out of halt by a SCHED_IDLE
# busy loop, fio too: what the default does where a wake-up is cheap.
#
# The ring: order 2 (128 slots).  The frontend uses 32 indirect segments
# for 4 KiB reads (Linux blkfront's default; its grant budget then allows
# all 32 requests in flight) and 256 for 1 MiB writes (one request each).
set -euo pipefail
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
size=${BENCH_SIZE:-512M}
secs=${BENCH_SECONDS:-5}
repeat=${BENCH_REPEAT:-3}
seq_qd=${BENCH_SEQ_QD:-4}
dir=$(mktemp -d "${BENCH_DIR:-/var/tmp}/bk-bench.XXXXXX")
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

command -v fio >/dev/null || { echo "bench: fio not installed"; exit 1; }
if grep -q -- '-fsanitize' "$top_builddir/config.log" 2>/dev/null; then
	echo "bench: WARNING: this build uses sanitizers; numbers are not representative" >&2
fi
img=$dir/disk.img
# a fully written file, so reads hit real blocks
fio --name=prep --filename="$img" --size="$size" --rw=write --bs=1M --direct=1 \
	--ioengine=libaio --iodepth=8 --output=/dev/null
sync

export XENSTORED_PATH=$sim/xenstore.sock
"$top_builddir/sim/xensim" --dir "$sim" --pidfile "$sim/xensim.pid" 2>/dev/null &
pids+=($!)
for (( i=0; i<100; i++ )); do [ -s "$sim/xensim.pid" ] && break; sleep 0.1; done
dom=$("$top_builddir/sim/xensim-ctl" --dir "$sim" create-domain bench)
front="$top_builddir/frontend-test/blkfront-test"
backend_pid=
backend_start() { # PARAMS [extra blkbackd options]
	local params=$1
	shift
	rm -f "$dir/bk.pid"
	"$top_builddir/backend/blkbackd" -f --transport=sim --sim-dir="$sim" \
		${BENCH_BACKEND_ARGS:-} "$@" \
		--pidfile="$dir/bk.pid" 2>>"$dir/bk.log" &
	backend_pid=$!
	pids+=($backend_pid)
	for (( i=0; i<100; i++ )); do [ -s "$dir/bk.pid" ] && break; sleep 0.1; done
	"$front" xl-add --domid "$dom" --params "$params" >/dev/null
}
backend_stop() {
	"$front" xl-remove --domid "$dom" >/dev/null
	kill "$backend_pid" && wait "$backend_pid" || true
}
front_extra=()

jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# cpu_ticks PID: user + system clock ticks the process has used
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
. "$(dirname "$0")/bench-lib.sh"	# val, median, hz, host_ticks, host_cost

ring() { # name rw bs iodepth max-indirect [more blkfront-test io options]
	local name=$1 rw=$2 bs=$3 qd=$4 ind=$5 t0 t1 fe_us ios h0 h1
	shift 5
	t0=$(cpu_ticks "$backend_pid")
	h0=$(host_ticks)
	/usr/bin/time -f '%U %S' -o "$dir/$name.time" \
		"$front" io --sim-dir "$sim" --domid "$dom" --ring-order 2 --max-indirect "$ind" \
		${BENCH_FRONT_ARGS:-} "${front_extra[@]}" --rw "$rw" --bs "$bs" \
		--iodepth "$qd" --size "$size" --runtime "$secs" --output-format json "$@" > "$dir/$name.json"
	h1=$(host_ticks)
	t1=$(cpu_ticks "$backend_pid")
	ios=$(jget "$dir/$name.json" "d['ios']")
	fe_us=$(awk -v ios="$ios" '{ printf "%.2f", ($1 + $2) * 1e6 / (ios > 0 ? ios : 1) }' "$dir/$name.time")
	echo "bench=$name path=ring rw=$rw bs=$bs iodepth=$qd $* iops=$(jget "$dir/$name.json" "round(d['iops'])") MBps=$(jget "$dir/$name.json" "round(d['mbps'],1)") bk_us_per_req=$(python3 -c "print(round(($t1 - $t0) * 1e6 / $hz / max($ios, 1), 2))") fe_us_per_req=$fe_us $(host_cost "$h0" "$h1" "$ios")"
}
fiorun() { # name rw bs iodepth
	local h0 h1 k=read
	h0=$(host_ticks)
	fio --name="$1" --filename="$img" --size="$size" --rw="$2" --bs="$3" --iodepth="$4" \
		--direct=1 --ioengine=libaio --runtime="$secs" --time_based \
		--output-format=json > "$dir/$1.fio.json"
	h1=$(host_ticks)
	{ [ "$2" = write ] || [ "$2" = randwrite ]; } && k=write
	echo "bench=$1 path=fio rw=$2 bs=$3 iodepth=$4 iops=$(jget "$dir/$1.fio.json" "round(d['jobs'][0]['$k']['iops'])") MBps=$(jget "$dir/$1.fio.json" "round(d['jobs'][0]['$k']['bw_bytes']/1e6,1)") fio_us_per_req=$(jget "$dir/$1.fio.json" "round((d['jobs'][0]['usr_cpu'] + d['jobs'][0]['sys_cpu']) / 100 * d['jobs'][0]['job_runtime'] * 1e3 / max(d['jobs'][0]['$k']['total_ios'], 1), 2)") $(host_cost "$h0" "$h1" "$(jget "$dir/$1.fio.json" "d['jobs'][0]['$k']['total_ios']")")"
}

rev=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# blkbackd bench, git $rev, $(nproc) CPUs, file $size on $(df --output=fstype "$dir" | tail -1), $secs s per job"
# pair NAME KEY GOAL RING-ARGS... -- FIO-ARGS...: $repeat rounds of ring
# and fio, the first of each round alternating (ring first in rounds 1,
# 3, ...; fio first in 2, 4, ...: the one that runs second finds the
# host's disk and page cache as the first left them); each run printed,
# then the medians' ratio
pair() {
	local name=$1 key=$2 goal=$3 i c l rv=() fv=() rh=() fh=() fb=()
	shift 3
	local -a ra=() fa=()
	while [ "$1" != -- ]; do ra+=("$1"); shift; done
	shift
	fa=("$@")
	for (( i=0; i<repeat * 2; i++ )); do
		c=$(( (i / 2 + i % 2) % 2 ))
		if (( c == 0 )); then
			l=$(ring "${ra[@]}"); rv+=("$(val "$l" "$key")"); rh+=("$(val "$l" host_us_per_req)")
		else
			l=$(fiorun "${fa[@]}"); fv+=("$(val "$l" "$key")"); fh+=("$(val "$l" host_us_per_req)")
			fb+=("$(val "$l" host_busy_pct)")
		fi
		echo "$l"
	done
	local rm fm rhm fhm fbm
	rm=$(median "${rv[@]}") fm=$(median "${fv[@]}")
	rhm=$(median "${rh[@]}") fhm=$(median "${fh[@]}") fbm=$(median "${fb[@]}")
	echo "ratio $name $key ring/fio = $(python3 -c "print(round($rm/$fm,3))") (medians $rm / $fm over $repeat runs each; goal >= $goal)"
	# the machine's CPU per request: with fio's run keeping every CPU
	# busy, the ring's ratio is bounded by fio's cost over the ring's
	echo "  host CPU per request: ring $rhm us, fio $fhm us (fio kept the CPUs $fbm % busy; fio/ring $(python3 -c "print(round($fhm/max($rhm, 0.01),3))"))"
}
poll_us=${BENCH_POLL_US:-1000}
sections=" ${BENCH_SECTIONS:-default polled fe-polled fast-wake null} "
want() { [[ $sections == *" $1 "* ]]; }
if want default; then
backend_start "$img"
echo "# $(grep -o 'I/O engine: [a-z_]*' "$dir/bk.log" | tail -1)"
pair randread-4k-qd32 iops 0.9 randread-4k randread 4k 32 32 -- randread-4k randread 4k 32
pair seqwrite-1m MBps 0.95 seqwrite-1m write 1m "$seq_qd" 256 -- seqwrite-1m write 1m "$seq_qd"
backend_stop
fi
if want polled; then
echo "# polled: blkbackd and blkfront-test io with --poll-max-us $poll_us"
backend_start "$img" --poll-max-us "$poll_us"
front_extra=(--poll-max-us "$poll_us")
pair randread-4k-qd32-polled iops 0.9 randread-4k-polled randread 4k 32 32 -- randread-4k randread 4k 32
backend_stop
front_extra=()
fi
if want fe-polled; then
front_extra=(--poll-max-us "$poll_us")
echo "# blkbackd with its default windows, the frontend polled (a frontend that wakes as fast as an interrupt handler)"
backend_start "$img"
pair randread-4k-qd32-fe-polled iops 0.9 randread-4k-fe-polled randread 4k 32 32 -- randread-4k randread 4k 32
backend_stop
front_extra=()
fi
if want fast-wake; then
echo "# default windows on a machine whose idle CPUs wake fast: every CPU runs a SCHED_IDLE busy loop (ring and fio rows alike)"
# What the default 4 KiB row loses is wake-ups: a vCPU that halts here
# takes ~26 us to run a thread woken from another CPU, and the ring
# pays two such wake-ups per round of requests that fio does not.  A
# SCHED_IDLE loop on every CPU keeps the vCPUs out of halt, so a
# wake-up only preempts the loop (~13 us); it gives up the CPU to any
# other thread at once.  Its host_us_per_req counts the loops: read
# the ratio, not the CPU, on this row.
spin_pids=()
for c in $(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))'); do
	chrt --idle 0 taskset -c "$c" sh -c 'while :; do :; done' &
	spin_pids+=($!)
	pids+=($!)
done
backend_start "$img"
pair randread-4k-qd32-fast-wake iops 0.9 randread-4k-fast-wake randread 4k 32 32 -- randread-4k-fast-wake randread 4k 32
backend_stop
kill "${spin_pids[@]}" 2>/dev/null || true
wait "${spin_pids[@]}" 2>/dev/null || true
fi
if want null; then
echo "# null store: the ring's own cost (goal: >= 1M requests/s on one queue at QD128)"
backend_start "null:$size"
for q in 1 2; do
	for qd in 1 32 128; do
		ring null-q$q-qd$qd randread 4k $qd 0 --queues $q
	done
done
backend_stop
fi
