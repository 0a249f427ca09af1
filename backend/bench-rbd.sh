#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-rbd.sh: blkbackd's rbd store through the ring vs fio's rbd engine
# on the same RBD image, same run ("make -C backend bench"; see
# BENCHMARKS.md).  Never part of make check.
#
#   4 KiB random read, QD32     (blkfront-test io vs fio --ioengine=rbd)
#   4 KiB random write, QD32    (same)
#   1 MiB sequential write      (BENCH_SEQ_QD in flight, default 4)
#   1 MiB sequential read       (same)
#
# It starts its own throw-away cluster (tests/ceph/cluster.sh: a mon, a
# mgr and one OSD on 127.0.0.1; CEPH_OBJECTSTORE=memstore by default, or
# bluestore on a sparse file) and removes it at exit.  The image is
# written in full first (fio, 4 MiB writes), so the read rows read real
# objects, not holes librbd answers itself.  Both paths use the same
# ceph.conf, hence the same librbd cache settings.  blkbackd holds the
# image's exclusive lock only while blkfront-test io is connected (the
# vbd's store is opened at connect and closed at disconnect), so the fio
# runs in between open the image freely.
#
# Output: as bench.sh, one key=value line per run (ring rows with
# blkbackd's and blkfront-test's CPU per request, fio rows with fio's),
# ring and fio runs alternating BENCH_REPEAT times, then the ratio of the
# medians against the goal.  Skips (exit 0, reason printed) without the
# rbd store in this build, without the Ceph daemons, or without fio's rbd
# engine.  Knobs: BENCH_RBD_SIZE (image, default 256M; memstore keeps it
# in the OSD's RAM, 1 GiB at most), BENCH_SECONDS (per run, default 5),
# BENCH_REPEAT (default 3), BENCH_SEQ_QD (default 4), CEPH_OBJECTSTORE.
set -euo pipefail
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
size=${BENCH_RBD_SIZE:-256M}
secs=${BENCH_SECONDS:-5}
repeat=${BENCH_REPEAT:-3}
seq_qd=${BENCH_SEQ_QD:-4}

skip() { echo "# rbd rows skipped: $*"; exit 0; }
grep -q '^#define HAVE_LIBRBD 1' "$top_builddir/config.h" 2>/dev/null ||
	skip "blkbackd was built without the rbd store (librbd-dev, librados-dev; configure again)"
for c in ceph-mon ceph-mgr ceph-osd ceph-authtool monmaptool ceph rbd uuidgen ss fio; do
	command -v $c >/dev/null || skip "$c not found (tests/ceph/install-deps)"
done
fio --enghelp 2>/dev/null | grep -qw rbd || skip "fio has no rbd engine"
if grep -q -- '-fsanitize' "$top_builddir/config.log" 2>/dev/null; then
	echo "bench: WARNING: this build uses sanitizers; numbers are not representative" >&2
fi

dir=$(mktemp -d "${BENCH_DIR:-/var/tmp}/bk-bench-rbd.XXXXXX")
sim=$dir/sim
mkdir -p "$sim"
pids=()
wait_for() { # SECS CMD...: cluster.sh's helper
	local end=$(( $(date +%s) + $1 ))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.1
	done
}
. "$top_srcdir/tests/ceph/cluster.sh"
cleanup() {
	local i
	for (( i=${#pids[@]}-1; i>=0; i-- )); do
		kill "${pids[$i]}" 2>/dev/null && wait "${pids[$i]}" 2>/dev/null || true
	done
	ceph_stop
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ceph_start "$dir/ceph" > "$dir/cluster.out" 2>&1 || { cat "$dir/cluster.out"; exit 1; }
image=bench
rbdc create --size "$size" "$CEPH_POOL/$image"
# fio's rbd engine finds the cluster through librados's CEPH_CONF
export CEPH_CONF
fio --name=prefill --ioengine=rbd --clientname=admin --pool="$CEPH_POOL" --rbdname="$image" \
	--rw=write --bs=4M --iodepth=8 --size="$size" --output=/dev/null

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
"$front" xl-add --domid "$dom" --params "rbd:$CEPH_POOL/$image:conf=$CEPH_CONF" >/dev/null

jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

ring() { # name rw bs iodepth max-indirect
	local name=$1 rw=$2 bs=$3 qd=$4 ind=$5 t0 t1 fe_us ios
	t0=$(cpu_ticks "$backend_pid")
	/usr/bin/time -f '%U %S' -o "$dir/$name.time" \
		"$front" io --sim-dir "$sim" --domid "$dom" --ring-order 2 --max-indirect "$ind" \
		${BENCH_FRONT_ARGS:-} --rw "$rw" --bs "$bs" --iodepth "$qd" --size "$size" \
		--runtime "$secs" --output-format json > "$dir/$name.json"
	t1=$(cpu_ticks "$backend_pid")
	ios=$(jget "$dir/$name.json" "d['ios']")
	fe_us=$(awk -v ios="$ios" '{ printf "%.2f", ($1 + $2) * 1e6 / (ios > 0 ? ios : 1) }' "$dir/$name.time")
	echo "bench=$name path=ring store=rbd rw=$rw bs=$bs iodepth=$qd iops=$(jget "$dir/$name.json" "round(d['iops'])") MBps=$(jget "$dir/$name.json" "round(d['mbps'],1)") bk_us_per_req=$(python3 -c "print(round(($t1 - $t0) * 1e6 / $hz / max($ios, 1), 2))") fe_us_per_req=$fe_us"
}
fiorun() { # name rw bs iodepth
	fio --name="$1" --ioengine=rbd --clientname=admin --pool="$CEPH_POOL" --rbdname="$image" \
		--size="$size" --rw="$2" --bs="$3" --iodepth="$4" --runtime="$secs" --time_based \
		--output-format=json > "$dir/$1.fio.json"
	local k=read; [ "$2" = write ] || [ "$2" = randwrite ] && k=write
	echo "bench=$1 path=fio store=rbd rw=$2 bs=$3 iodepth=$4 iops=$(jget "$dir/$1.fio.json" "round(d['jobs'][0]['$k']['iops'])") MBps=$(jget "$dir/$1.fio.json" "round(d['jobs'][0]['$k']['bw_bytes']/1e6,1)") fio_us_per_req=$(jget "$dir/$1.fio.json" "round((d['jobs'][0]['usr_cpu'] + d['jobs'][0]['sys_cpu']) / 100 * d['jobs'][0]['job_runtime'] * 1e3 / max(d['jobs'][0]['$k']['total_ios'], 1), 2)")"
}

rev=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# blkbackd rbd bench, git $rev, $(nproc) CPUs, image $size on one ${CEPH_OBJECTSTORE:-memstore} OSD (127.0.0.1), $secs s per job"
val() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" <<< "$1"; }
median() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
# pair NAME KEY GOAL RING-ARGS... -- FIO-ARGS...: alternate, print each, then the medians' ratio
pair() {
	local name=$1 key=$2 goal=$3 i l rv=() fv=()
	shift 3
	local -a ra=() fa=()
	while [ "$1" != -- ]; do ra+=("$1"); shift; done
	shift
	fa=("$@")
	for (( i=0; i<repeat; i++ )); do
		l=$(ring "${ra[@]}"); echo "$l"; rv+=("$(val "$l" "$key")")
		l=$(fiorun "${fa[@]}"); echo "$l"; fv+=("$(val "$l" "$key")")
	done
	local rm fm
	rm=$(median "${rv[@]}") fm=$(median "${fv[@]}")
	echo "ratio rbd-$name $key ring/fio = $(python3 -c "print(round($rm/$fm,3))") (medians $rm / $fm over $repeat runs each; goal >= $goal)"
}
# 4 KiB: 32 indirect segments (Linux blkfront's default); 1 MiB: 256 (one request each)
pair randread-4k-qd32 iops 0.9 rbd-randread-4k randread 4k 32 32 -- rbd-randread-4k randread 4k 32
pair randwrite-4k-qd32 iops 0.9 rbd-randwrite-4k randwrite 4k 32 32 -- rbd-randwrite-4k randwrite 4k 32
pair seqwrite-1m MBps 0.95 rbd-seqwrite-1m write 1m "$seq_qd" 256 -- rbd-seqwrite-1m write 1m "$seq_qd"
pair seqread-1m MBps 0.95 rbd-seqread-1m read 1m "$seq_qd" 256 -- rbd-seqread-1m read 1m "$seq_qd"
"$front" xl-remove --domid "$dom" >/dev/null
