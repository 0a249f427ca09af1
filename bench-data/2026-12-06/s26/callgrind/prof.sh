#!/bin/bash
# blkbackd's user-space instructions per request under callgrind (xensim, QD1)
set -euo pipefail
B=${B:-/work/b-plain}; rw=${RW:-randread}; qd=${QD:-1}; secs=${SECS:-6}; out=${OUT:-/work/s26/prof}
mkdir -p $out; dir=$(mktemp -d /var/tmp/bk-prof.XXXXXX); sim=$dir/sim; mkdir -p $sim
pids=(); cleanup() { for p in "${pids[@]}"; do kill $p 2>/dev/null; wait $p 2>/dev/null; done; rm -rf $dir; }; trap cleanup EXIT
img=$dir/disk.img
fio --name=prep --filename=$img --size=64M --rw=write --bs=1M --direct=1 --ioengine=libaio --iodepth=8 --output=/dev/null
export XENSTORED_PATH=$sim/xenstore.sock
$B/sim/xensim --dir $sim --pidfile $sim/xensim.pid 2>/dev/null & pids+=($!)
for i in $(seq 100); do [ -s $sim/xensim.pid ] && break; sleep 0.1; done
dom=$($B/sim/xensim-ctl --dir $sim create-domain bench)
valgrind --tool=callgrind --callgrind-out-file=$out/cg.$rw.qd$qd.%p --collect-atstart=yes ${VG_ARGS:-} \
	$B/backend/blkbackd -f --transport=sim --sim-dir=$sim --poll-max-us=0 ${BK_ARGS:-} --pidfile=$dir/bk.pid 2>$out/bk.$rw.qd$qd.log & bk=$!; pids+=($bk)
for i in $(seq 300); do [ -s $dir/bk.pid ] && break; sleep 0.1; done
$B/frontend-test/blkfront-test xl-add --domid $dom --params $img >/dev/null
sleep 3
callgrind_control -z $bk >/dev/null
$B/frontend-test/blkfront-test io --sim-dir $sim --domid $dom --ring-order 2 --max-indirect 32 --rw $rw --bs 4k --iodepth $qd --size 64M --runtime $secs --output-format json > $out/io.$rw.qd$qd.json
callgrind_control -d $bk >/dev/null
$B/frontend-test/blkfront-test xl-remove --domid $dom >/dev/null
kill $bk; wait $bk || true
python3 -c "import json,sys; print('ios', json.load(open(sys.argv[1]))['ios'])" $out/io.$rw.qd$qd.json
