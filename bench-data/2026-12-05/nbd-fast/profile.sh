#!/bin/bash
# usage: nbdfast-prof.sh BUILDDIR OUTDIR  -- profile blkbackd + nbdkit during 4k randread/randwrite QD32
set -euo pipefail
b=$1 out=$2; mkdir -p "$out"
export BLKBACKD_STORE_DIR=$b/backend/.libs
dir=$(mktemp -d /var/tmp/nbdfast-prof.XXXXXX); sim=$dir/sim; mkdir -p $sim
pids=()
cleanup() { for (( i=${#pids[@]}-1; i>=0; i-- )); do kill "${pids[$i]}" 2>/dev/null && wait "${pids[$i]}" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
nbdkit -f -U "$dir/nbd.sock" -P "$dir/nbd.pid" memory size=256M & pids+=($!)
for (( i=0; i<100; i++ )); do [ -s "$dir/nbd.pid" ] && break; sleep 0.1; done
nbd_pid=$(cat $dir/nbd.pid)
uri="nbd+unix:///?socket=$dir/nbd.sock"
fio --name=prefill --ioengine=nbd --uri="$uri" --rw=write --bs=4M --iodepth=8 --size=256M --output=/dev/null
export XENSTORED_PATH=$sim/xenstore.sock
$b/sim/xensim --dir $sim --pidfile $sim/xensim.pid 2>/dev/null & pids+=($!)
for (( i=0; i<100; i++ )); do [ -s "$sim/xensim.pid" ] && break; sleep 0.1; done
dom=$($b/sim/xensim-ctl --dir $sim create-domain bench)
front=$b/frontend-test/blkfront-test
$b/backend/blkbackd -f --transport=sim --sim-dir=$sim --pidfile=$dir/bk.pid 2>>$dir/bk.log & bk=$!; pids+=($bk)
for (( i=0; i<100; i++ )); do [ -s "$dir/bk.pid" ] && break; sleep 0.1; done
$front xl-add --domid $dom --params "nbd:$uri" >/dev/null
io() { $front io --sim-dir $sim --domid $dom --ring-order 2 --max-indirect $4 --rw $1 --bs $2 --iodepth $3 --size 256M --runtime ${5:-5} --output-format json; }
if [ -n "${PERF_ONLY:-}" ]; then
  for rw in $PERF_ONLY; do
    case $rw in randread|randwrite) bs=4k qd=32 ind=32;; read|write) bs=1m qd=4 ind=256;; esac
    io $rw $bs $qd $ind 2 >/dev/null
    perf record -e cpu-clock -a -o $out/perf-$rw.data -- sleep 4 >/dev/null 2>&1 & pp=$!
    io $rw $bs $qd $ind 5 > $out/io-perf-$rw.json
    wait $pp || true
    perf report -i $out/perf-$rw.data --no-children --stdio --sort comm,dso,sym 2>/dev/null | grep -E "^ +[0-9]" | head -150 > $out/perf-$rw.txt || true
    perf report -i $out/perf-$rw.data --no-children --stdio --sort comm 2>/dev/null | grep -E "^ +[0-9]" | head -20 > $out/perf-comm-$rw.txt || true
    rm -f $out/perf-$rw.data
  done
  $front xl-remove --domid $dom >/dev/null
  exit 0
fi
for rw in randread randwrite; do
  io $rw 4k 32 32 2 >/dev/null   # warm
  strace -c -f -p $bk -o $out/strace-bk-$rw.txt & sp=$!
  strace -c -f -p $nbd_pid -o $out/strace-nbdkit-$rw.txt & sp2=$!
  sleep 0.5
  io $rw 4k 32 32 5 > $out/io-strace-$rw.json
  kill -INT $sp $sp2; wait $sp $sp2 || true
  # fio for comparison of nbdkit syscalls
  strace -c -f -p $nbd_pid -o $out/strace-nbdkit-fio-$rw.txt & sp2=$!
  sleep 0.5
  fio --name=x --ioengine=nbd --uri="$uri" --size=256M --rw=$rw --bs=4k --iodepth=32 --runtime=5 --time_based --output-format=json --output=$out/fio-strace-$rw.json >/dev/null
  kill -INT $sp2; wait $sp2 || true
  if [ -n "${WITH_PERF:-}" ]; then
    perf record -e cpu-clock -g -o $out/perf-bk-$rw.data -p $bk -- sleep 4 >/dev/null 2>&1 & pp=$!
    io $rw 4k 32 32 5 > $out/io-perf-$rw.json
    wait $pp || true
    perf report -i $out/perf-bk-$rw.data --no-children --stdio --sort sym 2>/dev/null | grep -v '^$' | head -120 > $out/perf-bk-$rw.txt || true
    rm -f $out/perf-bk-$rw.data
  fi
done
$front xl-remove --domid $dom >/dev/null
