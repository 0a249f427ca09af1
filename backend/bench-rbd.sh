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
# bluestore on a sparse file) and removes it at exit.  Every run starts
# on a new image written in full (fio, 4 MiB writes; BENCH_RBD_FRESH
# below), so the read rows read real objects, not holes librbd answers
# itself, and no run inherits what the runs before it wrote.  Both
# paths use the same ceph.conf, hence the same librbd cache settings.
# blkbackd holds the image's exclusive lock only while blkfront-test io
# is connected (the vbd's store is opened at connect and closed at
# disconnect), so the fio runs in between open the image freely.  Each ring run starts with one
# flush (blkfront-test io --flush-at-start), as fio's rbd engine flushes
# at open and a guest's filesystem at its first journal commit: librbd's
# cache stays write-through until it has seen a flush
# (rbd_cache_writethrough_until_flush, left at its default by blkbackd as
# by QEMU), and a client that never sent one measured that instead.
#
# Three contenders per round, the first rotating: ring (blkfront-test io
# as a guest is: it copies every block to or from its persistent grants,
# as Linux blkfront does), ring-inplace (blkfront-test io --in-place: no
# copy, as fio's engine hands librbd its own buffer) and fio.  A guest
# makes that copy on its own vCPUs; here the frontend runs on the two
# CPUs blkbackd, the OSD and fio share, so ring-inplace shows what the
# copy costs the ring on them (45-82 us of CPU per MiB).  Output: as
# bench.sh, one key=value line per run (ring rows with blkbackd's and
# blkfront-test's CPU per request, fio rows with fio's), then the ratios
# of the medians: ring/fio against the goal, ring-inplace/fio beside
# it.  Skips (exit 0, reason printed) without the
# rbd store in this build, without the Ceph daemons, or without fio's rbd
# engine.  Knobs: BENCH_RBD_SIZE (image, default 256M; memstore keeps it
# in the OSD's RAM, 1 GiB at most), BENCH_SECONDS (per run, default 5),
# BENCH_REPEAT (default 3), BENCH_SEQ_QD (default 4), CEPH_OBJECTSTORE,
# BENCH_WARMUP (seconds of one uncounted ring and fio run per row before
# the counted ones, default 2; 0 none), BENCH_ROWS (the rows to run, e.g. "seqwrite-1m seqread-1m"; default all).
# BENCH_CEPH_CLIENT (ceph.conf [client] options: both clients),
# BENCH_RBD_PARAMS (librados options on blkbackd's disk line alone).
# CPU: bk_us_per_req/bk_us_per_MiB are blkbackd's whole process (its
# librbd threads included) over the ring run; fio_proc_us_per_* are
# fio's whole process, the same measure (fio_us_per_req is fio's own
# figure, its job thread alone).  osd_us_per_req is the OSD's over the
# same run; host_us_per_req every process's (the Ceph daemons',
# xensim's and the frontend's too; fio's connect to the cluster as
# well), and host_busy_pct how busy the two CPUs were; under each
# ratio, their medians (bench-lib.sh rounds).
set -euo pipefail
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
size=${BENCH_RBD_SIZE:-256M}
secs=${BENCH_SECONDS:-5}
repeat=${BENCH_REPEAT:-3}
seq_qd=${BENCH_SEQ_QD:-4}
# the rbd store is a module: the build tree's, unless told otherwise
export BLKBACKD_STORE_DIR=${BLKBACKD_STORE_DIR:-$top_builddir/backend/.libs}

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
osd_pid=$(ceph_daemon_pids | awk '$1 == "osd.0" { print $2 }')
# BENCH_CEPH_CLIENT: librbd options for both paths, ';'-separated
# ("rbd_cache = false"), in ceph.conf's [client] section
if [ -n "${BENCH_CEPH_CLIENT:-}" ]; then
	{ echo "[client]"; tr ';' '\n' <<< "$BENCH_CEPH_CLIENT"; } >> "$CEPH_CONF"
fi
image=bench
rbdc create --size "$size" "$CEPH_POOL/$image"
# fio's rbd engine finds the cluster through librados's CEPH_CONF
export CEPH_CONF
prefill() {
	fio --name=prefill --ioengine=rbd --clientname=admin --pool="$CEPH_POOL" --rbdname="$image" \
		--rw=write --bs=4M --iodepth=8 --size="$size" --output=/dev/null
}
prefill
# BENCH_RBD_FRESH (default 1; 0: off): every run, the ring's or fio's,
# starts on a new image of the same name written in full, outside what
# is timed and counted.  A memstore OSD slows down as 4 KiB writes land
# on an image: fio alone made 7 300-9 000 IOPS in its first 5 s on a
# new image and 3 800-6 300 in the next 5 s on the same one (bluestore
# on a file too, after a rewrite of the image: 7 300, then 4 700 and
# 3 500; BENCHMARKS.md "The OSD slows as a row writes").  A row's runs then measured how much had
# been written before them, and the contender that ran later lost.
# blkbackd has the image open only while the frontend is connected.
fresh_image() {
	local i
	[ "${BENCH_RBD_FRESH:-1}" = 1 ] || return 0
	for (( i=0; i<100; i++ )); do
		rbdc rm "$CEPH_POOL/$image" >/dev/null 2>&1 && break
		sleep 0.1
	done
	[ "$i" -lt 100 ] || { echo "bench: cannot remove $image: still open?" >&2; exit 1; }
	rbdc create --size "$size" "$CEPH_POOL/$image" && prefill
}

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
# BENCH_RBD_PARAMS: librados options for blkbackd's client alone,
# ':'-separated KEY=VALUE as in a disk line ("rbd_non_blocking_aio=false")
"$front" xl-add --domid "$dom" \
	--params "rbd:$CEPH_POOL/$image:conf=$CEPH_CONF${BENCH_RBD_PARAMS:+:$BENCH_RBD_PARAMS}" >/dev/null

jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
. "$(dirname "$0")/bench-lib.sh"

# BENCH_PERF_DIR: a flat profile (perf, where the CPU goes by library and
# symbol) of blkbackd per ring run and of fio per fio run, kept there
# (perf's own CPU then counts in fio's time(1) figure: not for cited runs)
perf_report() { # perf.data out.txt
	perf report -i "$1" --no-children --sort dso,sym --percent-limit 0.5 --stdio 2>/dev/null |
		grep -v '^$' | grep -v '^ *|' | grep -v -- '---' > "$2" || true
}
# ring runs blkfront-test io as a guest is (the frontend copies each
# block to or from its persistent grants, as Linux blkfront does), or
# with --in-place when its sixth argument is ring-inplace
ring() { # name rw bs iodepth max-indirect [ring|ring-inplace]
	local name=$1 rw=$2 bs=$3 qd=$4 ind=$5 path=${6:-ring} t0 t1 o0 o1 h0 h1 fe_us ios
	local inplace=
	[ "$path" = ring ] || inplace=--in-place
	fresh_image
	t0=$(cpu_ticks "$backend_pid") o0=$(cpu_ticks "$osd_pid")
	local perf_pid=
	if [ -n "${BENCH_PERF_DIR:-}" ]; then
		perf record -q -F 999 -g -p "$backend_pid" -o "$BENCH_PERF_DIR/$name.ring.perf" 2>/dev/null &
		perf_pid=$!
	fi
	h0=$(host_ticks)
	/usr/bin/time -f '%U %S' -o "$dir/$name.time" \
		"$front" io --sim-dir "$sim" --domid "$dom" --ring-order 2 --max-indirect "$ind" \
		--flush-at-start $inplace ${BENCH_FRONT_ARGS:-} --rw "$rw" --bs "$bs" --iodepth "$qd" --size "$size" \
		--runtime "$secs" --output-format json > "$dir/$name.json"
	h1=$(host_ticks)
	t1=$(cpu_ticks "$backend_pid") o1=$(cpu_ticks "$osd_pid")
	if [ -n "$perf_pid" ]; then
		kill -INT "$perf_pid"; wait "$perf_pid" || true
		perf_report "$BENCH_PERF_DIR/$name.ring.perf" "$BENCH_PERF_DIR/$name.ring.$(date +%s).txt"
	fi
	ios=$(jget "$dir/$name.json" "d['ios']")
	fe_us=$(awk -v ios="$ios" '{ printf "%.2f", ($1 + $2) * 1e6 / (ios > 0 ? ios : 1) }' "$dir/$name.time")
	local bk_us mib
	bk_us=$(python3 -c "print(($t1 - $t0) * 1e6 / $hz)")
	mib=$(jget "$dir/$name.json" "d['bytes'] / 1048576")
	local j="$dir/$name.json"
	echo "bench=$name path=$path store=rbd rw=$rw bs=$bs iodepth=$qd" \
		"iops=$(jget "$j" "round(d['iops'])") MBps=$(jget "$j" "round(d['mbps'],1)")" \
		"bk_us_per_req=$(python3 -c "print(round($bk_us / max($ios, 1), 2))")" \
		"bk_us_per_MiB=$(python3 -c "print(round($bk_us / max($mib, 1e-9), 1))")" \
		"fe_us_per_req=$fe_us lat_p50_us=$(jget "$j" "d['lat_us']['p50']")" \
		"lat_p99_us=$(jget "$j" "d['lat_us']['p99']")" \
		"osd_us_per_req=$(per_req "$o0" "$o1" "$ios") $(host_cost "$h0" "$h1" "$ios")"
}
fiorun() { # name rw bs iodepth
	local perf=()
	[ -z "${BENCH_PERF_DIR:-}" ] || perf=(perf record -q -F 999 -g -o "$BENCH_PERF_DIR/$1.fio.perf" --)
	local h0 h1 o0 o1
	fresh_image
	o0=$(cpu_ticks "$osd_pid") h0=$(host_ticks)
	/usr/bin/time -f '%U %S' -o "$dir/$1.fio.time" \
	"${perf[@]}" fio --name="$1" --ioengine=rbd --clientname=admin --pool="$CEPH_POOL" --rbdname="$image" \
		--size="$size" --rw="$2" --bs="$3" --iodepth="$4" --runtime="$secs" --time_based \
		--output-format=json > "$dir/$1.fio.json"
	h1=$(host_ticks) o1=$(cpu_ticks "$osd_pid")
	[ -z "${BENCH_PERF_DIR:-}" ] || perf_report "$BENCH_PERF_DIR/$1.fio.perf" "$BENCH_PERF_DIR/$1.fio.$(date +%s).txt"
	local k=read; [ "$2" = write ] || [ "$2" = randwrite ] && k=write
	# fio's usr_cpu/sys_cpu are its job thread's alone (getrusage
	# RUSAGE_THREAD), without librbd's threads, where the copies and the
	# messenger run; the whole process's CPU (time(1), connect and image
	# open included) is the figure to set beside blkbackd's
	local ios proc_us
	ios=$(jget "$dir/$1.fio.json" "d['jobs'][0]['$k']['total_ios']")
	proc_us=$(awk '{ printf "%.0f", ($1 + $2) * 1e6 }' "$dir/$1.fio.time")
	local f="$dir/$1.fio.json" J="d['jobs'][0]"
	local iops mbps req_us proc_req proc_mib p50
	iops=$(jget "$f" "round($J['$k']['iops'])")
	mbps=$(jget "$f" "round($J['$k']['bw_bytes']/1e6,1)")
	req_us=$(jget "$f" "round(($J['usr_cpu'] + $J['sys_cpu']) / 100 * $J['job_runtime'] * 1e3 / max($J['$k']['total_ios'], 1), 2)")
	proc_req=$(python3 -c "print(round($proc_us / max($ios, 1), 2))")
	proc_mib=$(jget "$f" "round($proc_us / max($J['$k']['io_bytes'] / 1048576, 1e-9), 1)")
	p50=$(jget "$f" "round($J['$k']['lat_ns']['percentile']['50.000000'] / 1e3, 1) if 'percentile' in $J['$k']['lat_ns'] else round($J['$k']['clat_ns']['percentile']['50.000000'] / 1e3, 1)")
	echo "bench=$1 path=fio store=rbd rw=$2 bs=$3 iodepth=$4 iops=$iops MBps=$mbps" \
		"fio_us_per_req=$req_us fio_proc_us_per_req=$proc_req fio_proc_us_per_MiB=$proc_mib lat_p50_us=$p50" \
		"osd_us_per_req=$(per_req "$o0" "$o1" "$ios") $(host_cost "$h0" "$h1" "$ios")"
}

rev=${BENCH_REV:-$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "# blkbackd rbd bench, git $rev, $(nproc) CPUs, image $size on one ${CEPH_OBJECTSTORE:-memstore} OSD (127.0.0.1), $secs s per job${BENCH_CEPH_CLIENT:+, client: $BENCH_CEPH_CLIENT}${BENCH_RBD_PARAMS:+, blkbackd: $BENCH_RBD_PARAMS}"
# pair NAME KEY GOAL RING-ARGS... -- FIO-ARGS...: rounds (bench-lib.sh)
pair() {
	local name=$1 key=$2 goal=$3
	shift 3
	case " ${BENCH_ROWS:-$name} " in *" $name "*) ;; *) return 0;; esac
	local -a ra=() fa=()
	while [ "$1" != -- ]; do ra+=("$1"); shift; done
	shift
	fa=("$@")
	# warm-up, not counted: the first run after the prefill or after
	# another row (the OSD settling, blkbackd's first connection
	# mapping its persistent grants) was 2-4x slower than the next
	if [ "${BENCH_WARMUP:-2}" -gt 0 ]; then
		local secs=${BENCH_WARMUP:-2}
		ring "${ra[@]}" > /dev/null
		fiorun "${fa[@]}" > /dev/null
		secs=$(( ${BENCH_SECONDS:-5} ))
	fi
	rounds rbd "$name" "$key" "$goal"
}
# 4 KiB: 32 indirect segments (Linux blkfront's default); 1 MiB: 256 (one request each)
pair randread-4k-qd32 iops 1.0 rbd-randread-4k randread 4k 32 32 -- rbd-randread-4k randread 4k 32
pair randwrite-4k-qd32 iops 1.0 rbd-randwrite-4k randwrite 4k 32 32 -- rbd-randwrite-4k randwrite 4k 32
pair seqwrite-1m MBps 0.95 rbd-seqwrite-1m write 1m "$seq_qd" 256 -- rbd-seqwrite-1m write 1m "$seq_qd"
pair seqread-1m MBps 0.95 rbd-seqread-1m read 1m "$seq_qd" 256 -- rbd-seqread-1m read 1m "$seq_qd"
"$front" xl-remove --domid "$dom" >/dev/null
