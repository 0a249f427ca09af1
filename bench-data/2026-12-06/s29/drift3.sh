#!/usr/bin/env bash
# drift3.sh SRCDIR: 8 randwrite runs on one image, then 4 after a refill
set -u
top_srcdir=$1
dir=$(mktemp -d /var/tmp/drift.XXXXXX)
wait_for() { local end=$(( $(date +%s) + $1 )); shift; until "$@"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.1; done; }
. "$top_srcdir/tests/ceph/cluster.sh"
. "$top_srcdir/backend/bench-lib.sh"
trap 'ceph_stop; rm -rf "$dir"' EXIT
ceph_start "$dir/ceph" > "$dir/cluster.out" 2>&1 || { cat "$dir/cluster.out"; exit 1; }
osd_pid=$(ceph_daemon_pids | awk '$1 == "osd.0" { print $2 }')
grep -i "page set" "$CEPH_CONF"
export CEPH_CONF
rbdc create --size 256M "$CEPH_POOL/bench"
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
prefill
for i in 1 2 3 4 5 6 7 8; do run "same-image run$i"; done
prefill
for i in 1 2 3 4; do run "after-refill run$i"; done
