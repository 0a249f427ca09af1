#!/usr/bin/env bash
# drift.sh SRCDIR: does a memstore OSD slow down as 4 KiB random writes
# accumulate, and does rewriting the image in 4 MiB writes undo it?
# fio alone: 6 randwrite runs of 5 s, a prefill, 6 more, [memstore_page_set]
set -u
top_srcdir=$1
dir=$(mktemp -d /var/tmp/drift.XXXXXX)
wait_for() { local end=$(( $(date +%s) + $1 )); shift; until "$@"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.1; done; }
. "$top_srcdir/tests/ceph/cluster.sh"
. "$top_srcdir/backend/bench-lib.sh"
trap 'ceph_stop; rm -rf "$dir"' EXIT
ceph_start "$dir/ceph" > "$dir/cluster.out" 2>&1 || { cat "$dir/cluster.out"; exit 1; }
osd_pid=$(ceph_daemon_pids | awk '$1 == "osd.0" { print $2 }')
echo "# $(ceph --conf "$CEPH_CONF" daemon osd.0 config get memstore_page_set 2>/dev/null | tr -d '\n ')"
export CEPH_CONF
:
prefill() { fio --name=prefill --ioengine=rbd --clientname=admin --pool="$CEPH_POOL" --rbdname=bench \
	--rw=write --bs=4M --iodepth=8 --size=256M --output=/dev/null; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
run() {
	local o0 o1 ios iops
	o0=$(cpu_ticks "$osd_pid")
	fio --name=b --ioengine=rbd --clientname=admin --pool="$CEPH_POOL" --rbdname=bench --size=256M \
		--rw=randwrite --bs=4k --iodepth=32 --runtime=5 --time_based --output-format=json > "$dir/j"
	o1=$(cpu_ticks "$osd_pid")
	ios=$(python3 -c "import json; print(json.load(open('$dir/j'))['jobs'][0]['write']['total_ios'])")
	iops=$(python3 -c "import json; print(round(json.load(open('$dir/j'))['jobs'][0]['write']['iops']))")
	echo "$1 iops=$iops osd_us_per_req=$(per_req "$o0" "$o1" "$ios")"
}
:
# each run on a new image of the same name, written in full first
for i in 1 2 3 4 5 6 7 8; do
	rbdc rm "$CEPH_POOL/bench" >/dev/null 2>&1; rbdc create --size 256M "$CEPH_POOL/bench"; prefill
	run "fresh-image run$i rss_kb=$(awk '/VmRSS/ { print $2 }' /proc/$osd_pid/status)"
done
for i in 1 2 3 4; do run "same-image run$i rss_kb=$(awk '/VmRSS/ { print $2 }' /proc/$osd_pid/status)"; done
