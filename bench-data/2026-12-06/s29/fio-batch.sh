#!/usr/bin/env bash
# fio-batch.sh SRCDIR ROUNDS: does the OSD's CPU per 4 KiB write depend on
# how the client submits and reaps?  fio alone on bench-rbd.sh's kind of
# cluster (one memstore OSD, a 256M image written in full), rbd randwrite
# 4 KiB QD32, three ways rotating each round:
#   b1:  fio's default (submit each, reap from 1)
#   b8:  iodepth_batch_submit=8, iodepth_batch_complete_min=8
#   b16: iodepth_batch_submit=16, iodepth_batch_complete_min=16
# Prints per run: iops, the OSD's CPU per request, fio's process CPU per
# request, host busy.
set -u
top_srcdir=$1 rounds=${2:-5}
dir=$(mktemp -d /var/tmp/fio-batch.XXXXXX)
wait_for() { local end=$(( $(date +%s) + $1 )); shift; until "$@"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.1; done; }
. "$top_srcdir/tests/ceph/cluster.sh"
. "$top_srcdir/backend/bench-lib.sh"
trap 'ceph_stop; rm -rf "$dir"' EXIT
ceph_start "$dir/ceph" > "$dir/cluster.out" 2>&1 || { cat "$dir/cluster.out"; exit 1; }
osd_pid=$(ceph_daemon_pids | awk '$1 == "osd.0" { print $2 }')
export CEPH_CONF
rbdc create --size 256M "$CEPH_POOL/bench"
fio --name=prefill --ioengine=rbd --clientname=admin --pool="$CEPH_POOL" --rbdname=bench \
	--rw=write --bs=4M --iodepth=8 --size=256M --output=/dev/null
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
run() { # tag extra-args...
	local tag=$1; shift
	local o0 o1 h0 h1
	o0=$(cpu_ticks "$osd_pid") h0=$(host_ticks)
	/usr/bin/time -f '%U %S' -o "$dir/t" fio --name=b --ioengine=rbd --clientname=admin \
		--pool="$CEPH_POOL" --rbdname=bench --size=256M --rw=randwrite --bs=4k --iodepth=32 \
		--runtime=5 --time_based "$@" --output-format=json > "$dir/j"
	h1=$(host_ticks) o1=$(cpu_ticks "$osd_pid")
	local ios iops proc
	ios=$(python3 -c "import json; print(json.load(open('$dir/j'))['jobs'][0]['write']['total_ios'])")
	iops=$(python3 -c "import json; print(round(json.load(open('$dir/j'))['jobs'][0]['write']['iops']))")
	proc=$(awk -v n="$ios" '{ printf "%.2f", ($1 + $2) * 1e6 / n }' "$dir/t")
	echo "fio=$tag iops=$iops osd_us_per_req=$(per_req "$o0" "$o1" "$ios") fio_proc_us_per_req=$proc $(host_cost "$h0" "$h1" "$ios")"
}
run warm > /dev/null
tags=(b1 b8 b16)
for (( i=0; i<rounds*3; i++ )); do
	t=${tags[(i / 3 + i % 3) % 3]}
	case $t in
	b1) run b1 ;;
	b8) run b8 --iodepth_batch_submit=8 --iodepth_batch_complete_min=8 ;;
	b16) run b16 --iodepth_batch_submit=16 --iodepth_batch_complete_min=16 ;;
	esac
done
