#!/usr/bin/env bash
# fio-qd-nbd.sh ROUNDS: the control for inflight.sh on the nbd
# randwrite row, where ~24 of the ring's 32 requests are inside
# blkbackd.  One nbdkit memory export as bench-nbd.sh makes it; fio's
# nbd engine at QD 32, 24 and 16, the first of each round rotating;
# 5 s runs after one uncounted warm-up; medians.
set -euo pipefail
rounds=${1:-5}
dir=$(mktemp -d /var/tmp/fio-qd-nbd.XXXXXX)
nbdkit -f -U "$dir/nbd.sock" -P "$dir/nbd.pid" memory size=256M &
np=$!
trap 'kill $np; wait $np || true; rm -rf "$dir"' EXIT
for (( i=0; i<100; i++ )); do [ -s "$dir/nbd.pid" ] && break; sleep 0.1; done
uri="nbd+unix:///?socket=$dir/nbd.sock"
f() { fio --name=q --ioengine=nbd --uri="$uri" --size=256M "$@" --output-format=json \
	--output="$dir/f.json" > /dev/null
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(round(d['jobs'][0]['write']['iops']))" "$dir/f.json"; }
f --rw=write --bs=4M --iodepth=8 >/dev/null
f --rw=randwrite --bs=4k --iodepth=32 --runtime=2 --time_based >/dev/null
qds=(32 24 16)
declare -A v
for (( i=0; i<rounds * 3; i++ )); do
	qd=${qds[(i / 3 + i % 3) % 3]}
	r=$(f --rw=randwrite --bs=4k --iodepth="$qd" --runtime=5 --time_based)
	echo "round=$(( i / 3 + 1 )) qd=$qd iops=$r"
	v[$qd]+=" $r"
done
for qd in "${qds[@]}"; do
	echo "qd=$qd median $(python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))" ${v[$qd]})"
done
