#!/usr/bin/env bash
# fio-qd.sh SRCDIR ROUNDS: the control for inflight.sh.  The ring's
# randread keeps ~30 of its 32 requests inside blkbackd (the other ~2
# are between the frontend and blkbackd); what does fio's rbd engine
# lose with 30 in flight instead of 32?  One cluster as bench-rbd.sh
# makes it; fio at QD 32, 30 and 28 per round, the first rotating; 5 s
# runs after one uncounted warm-up; medians.
set -euo pipefail
top_srcdir=$1 rounds=${2:-5}
dir=$(mktemp -d /var/tmp/fio-qd.XXXXXX)
wait_for() { local end=$(( $(date +%s) + $1 )); shift; until "$@"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.1; done; }
. "$top_srcdir/tests/ceph/cluster.sh"
trap 'ceph_stop; rm -rf "$dir"' EXIT
ceph_start "$dir/ceph" > "$dir/cluster.out" 2>&1 || { cat "$dir/cluster.out"; exit 1; }
rbdc create --size 256M "$CEPH_POOL/bench"
export CEPH_CONF
f() { fio --name=q --ioengine=rbd --clientname=admin --pool="$CEPH_POOL" --rbdname=bench \
	--size=256M "$@" --output-format=json | python3 -c "import json,sys; d=json.load(sys.stdin); print(round(d['jobs'][0]['read']['iops']))"; }
f --rw=write --bs=4M --iodepth=8 >/dev/null
f --rw=randread --bs=4k --iodepth=32 --runtime=2 --time_based >/dev/null
qds=(32 30 28)
declare -A v
for (( i=0; i<rounds * 3; i++ )); do
	qd=${qds[(i / 3 + i % 3) % 3]}
	r=$(f --rw=randread --bs=4k --iodepth="$qd" --runtime=5 --time_based)
	echo "round=$(( i / 3 + 1 )) qd=$qd iops=$r"
	v[$qd]+=" $r"
done
for qd in "${qds[@]}"; do
	echo "qd=$qd median $(python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))" ${v[$qd]})"
done
