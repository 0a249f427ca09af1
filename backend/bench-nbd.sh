#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-nbd.sh: blkbackd's nbd store through the ring vs fio's nbd engine
# (libnbd, the same library) on the same NBD export, same run ("make -C
# backend bench"; see BENCHMARKS.md).  Never part of make check.
#
#   4 KiB random read, QD32     (blkfront-test io vs fio --ioengine=nbd)
#   4 KiB random write, QD32    (same)
#   1 MiB sequential write      (BENCH_SEQ_QD in flight, default 4)
#   1 MiB sequential read       (same)
#
# The server is one nbdkit (memory plugin, BENCH_NBD_SIZE, default 256M,
# written in full first so reads read real pages) on a unix socket,
# serving both contenders; nbdkit advertises multi-conn, so blkbackd
# opens one connection per queue (one queue here) and fio one per job
# (one job).  Three contenders per round, the first rotating, as in
# bench-rbd.sh: ring (the frontend copies, as Linux blkfront with
# persistent grants), ring-inplace (blkfront-test io --in-place: no copy
# in the frontend, as fio's engine hands libnbd its own buffer; a
# guest's copy runs on its own vCPUs, here on the two CPUs nbdkit and
# blkbackd share) and fio.  Output as bench-rbd.sh: one key=value line
# per run (ring rows with blkbackd's and blkfront-test's CPU per
# request, fio rows with fio's; nbdkit's own CPU per request and the
# whole machine's, host_us_per_req, beside each), then the ratios of the
# medians: ring/fio against the goal (0.9), ring-inplace/fio beside it,
# and the three contenders' median host_us_per_req.  Skips (exit 0,
# reason printed) without the nbd store in this build, without nbdkit,
# or without fio's nbd engine.  Knobs: BENCH_NBD_SIZE, BENCH_SECONDS (default 5),
# BENCH_REPEAT (default 3), BENCH_SEQ_QD (default 4), BENCH_ROWS (the
# rows to run, e.g. "seqread-1m"; default all).
set -euo pipefail
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
size=${BENCH_NBD_SIZE:-256M}
secs=${BENCH_SECONDS:-5}
repeat=${BENCH_REPEAT:-3}
seq_qd=${BENCH_SEQ_QD:-4}
# the nbd store is a module: the build tree's, unless told otherwise
export BLKBACKD_STORE_DIR=${BLKBACKD_STORE_DIR:-$top_builddir/backend/.libs}

skip() { echo "# nbd rows skipped: $*"; exit 0; }
grep -q '^#define HAVE_LIBNBD 1' "$top_builddir/config.h" 2>/dev/null ||
	skip "blkbackd was built without the nbd store (libnbd-dev; configure again)"
for c in nbdkit fio; do
	command -v $c >/dev/null || skip "$c not found (.ci/install-deps)"
done
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"
if grep -q -- '-fsanitize' "$top_builddir/config.log" 2>/dev/null; then
	echo "bench: WARNING: this build uses sanitizers; numbers are not representative" >&2
fi

dir=$(mktemp -d "${BENCH_DIR:-/var/tmp}/bk-bench-nbd.XXXXXX")
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
trap 'exit 1' INT TERM

nbdkit -f -U "$dir/nbd.sock" -P "$dir/nbd.pid" memory size="$size" &
pids+=($!)
for (( i=0; i<100; i++ )); do [ -s "$dir/nbd.pid" ] && break; sleep 0.1; done
nbd_pid=$(cat "$dir/nbd.pid")
uri="nbd+unix:///?socket=$dir/nbd.sock"
fio --name=prefill --ioengine=nbd --uri="$uri" --rw=write --bs=4M --iodepth=8 --size="$size" \
	--output=/dev/null

export XENSTORED_PATH=$sim/xenstore.sock
"$top_builddir/sim/xensim" --dir "$sim" --pidfile "$sim/xensim.pid" 2>/dev/null &
pids+=($!)
for (( i=0; i<100; i++ )); do [ -s "$sim/xensim.pid" ] && break; sleep 0.1; done
dom=$("$top_builddir/sim/xensim-ctl" --dir "$sim" create-domain bench)
front="$top_builddir/frontend-test/blkfront-test"
rm -f "$dir/bk.pid"
"$top_builddir/backend/blkbackd" -f --transport=sim --sim-dir="$sim" ${BENCH_BACKEND_ARGS:-} \
	--pidfile="$dir/bk.pid" 2>>"$dir/bk.log" &
backend_pid=$!
pids+=($backend_pid)
for (( i=0; i<100; i++ )); do [ -s "$dir/bk.pid" ] && break; sleep 0.1; done
"$front" xl-add --domid "$dom" --params "nbd:$uri" >/dev/null

jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
. "$(dirname "$0")/bench-lib.sh"

# ring runs blkfront-test io as a guest is (the frontend copies each
# block to or from its persistent grants, as Linux blkfront does), or
# with --in-place when its sixth argument is ring-inplace
ring() { # name rw bs iodepth max-indirect [ring|ring-inplace]
	local name=$1 rw=$2 bs=$3 qd=$4 ind=$5 path=${6:-ring} t0 t1 n0 n1 h0 h1 fe_us ios
	local inplace=
	[ "$path" = ring ] || inplace=--in-place
	t0=$(cpu_ticks "$backend_pid") n0=$(cpu_ticks "$nbd_pid") h0=$(host_ticks)
	/usr/bin/time -f '%U %S' -o "$dir/$name.time" \
		"$front" io --sim-dir "$sim" --domid "$dom" --ring-order 2 --max-indirect "$ind" \
		$inplace ${BENCH_FRONT_ARGS:-} --rw "$rw" --bs "$bs" --iodepth "$qd" --size "$size" \
		--runtime "$secs" --output-format json > "$dir/$name.json"
	h1=$(host_ticks) t1=$(cpu_ticks "$backend_pid") n1=$(cpu_ticks "$nbd_pid")
	ios=$(jget "$dir/$name.json" "d['ios']")
	fe_us=$(awk -v ios="$ios" '{ printf "%.2f", ($1 + $2) * 1e6 / (ios > 0 ? ios : 1) }' "$dir/$name.time")
	echo "bench=$name path=$path store=nbd rw=$rw bs=$bs iodepth=$qd iops=$(jget "$dir/$name.json" "round(d['iops'])") MBps=$(jget "$dir/$name.json" "round(d['mbps'],1)") bk_us_per_req=$(per_req "$t0" "$t1" "$ios") fe_us_per_req=$fe_us server_us_per_req=$(per_req "$n0" "$n1" "$ios") $(host_cost "$h0" "$h1" "$ios")"
}
fiorun() { # name rw bs iodepth
	local n0 n1 h0 h1 k=read ios
	[ "$2" = write ] || [ "$2" = randwrite ] && k=write
	n0=$(cpu_ticks "$nbd_pid") h0=$(host_ticks)
	fio --name="$1" --ioengine=nbd --uri="$uri" --size="$size" --rw="$2" --bs="$3" \
		--iodepth="$4" --runtime="$secs" --time_based --output-format=json \
		--output="$dir/$1.fio.json" > /dev/null
	h1=$(host_ticks) n1=$(cpu_ticks "$nbd_pid")
	ios=$(jget "$dir/$1.fio.json" "d['jobs'][0]['$k']['total_ios']")
	echo "bench=$1 path=fio store=nbd rw=$2 bs=$3 iodepth=$4 iops=$(jget "$dir/$1.fio.json" "round(d['jobs'][0]['$k']['iops'])") MBps=$(jget "$dir/$1.fio.json" "round(d['jobs'][0]['$k']['bw_bytes']/1e6,1)") fio_us_per_req=$(jget "$dir/$1.fio.json" "round((d['jobs'][0]['usr_cpu'] + d['jobs'][0]['sys_cpu']) / 100 * d['jobs'][0]['job_runtime'] * 1e3 / max(d['jobs'][0]['$k']['total_ios'], 1), 2)") server_us_per_req=$(per_req "$n0" "$n1" "$ios") $(host_cost "$h0" "$h1" "$ios")"
}

rev=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# blkbackd nbd bench, git $rev, $(nproc) CPUs, nbdkit $(nbdkit --version | awk '{print $2}') memory $size on a unix socket, $secs s per job"
# pair NAME KEY GOAL RING-ARGS... -- FIO-ARGS...: rounds (bench-lib.sh)
pair() {
	local name=$1 key=$2 goal=$3
	shift 3
	case " ${BENCH_ROWS:-$name} " in *" $name "*) ;; *) return 0;; esac
	local -a ra=() fa=()
	while [ "$1" != -- ]; do ra+=("$1"); shift; done
	shift
	fa=("$@")
	rounds nbd "$name" "$key" "$goal"
}
# 4 KiB: 32 indirect segments (Linux blkfront's default); 1 MiB: 256 (one request each)
pair randread-4k-qd32 iops 0.9 nbd-randread-4k randread 4k 32 32 -- nbd-randread-4k randread 4k 32
pair randwrite-4k-qd32 iops 0.9 nbd-randwrite-4k randwrite 4k 32 32 -- nbd-randwrite-4k randwrite 4k 32
pair seqwrite-1m MBps 0.9 nbd-seqwrite-1m write 1m "$seq_qd" 256 -- nbd-seqwrite-1m write 1m "$seq_qd"
pair seqread-1m MBps 0.9 nbd-seqread-1m read 1m "$seq_qd" 256 -- nbd-seqread-1m read 1m "$seq_qd"
"$front" xl-remove --domid "$dom" >/dev/null
