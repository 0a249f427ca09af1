#!/bin/bash
# Repro: nbd export without multi-conn ("one shared connection") + guest using >=2 queues -> requests stall until timeout=, then ERROR
BP=/work/b-plain; cd $BP
W=$(mktemp -d /work/s29/attack/rE.XXXX)
export XENSIM_DIR=$W XENSTORED_PATH=$W/xenstore.sock BLKBACKD_STORE_DIR=$BP/backend/.libs
sim/xensim --dir $W --pidfile $W/xensim.pid 2>$W/xensim.log &
until [ -s $W/xensim.pid ]; do sleep 0.1; done
backend/blkbackd -f --transport=sim --pidfile=$W/blkbackd.pid 2>$W/blkbackd.log &
until [ -s $W/blkbackd.pid ]; do sleep 0.1; done
truncate -s 64M $W/disk.img
qemu-nbd -t -k $W/nbd.sock -f raw --cache=writeback $W/disk.img --fork --pid-file $W/nbd.pid; sleep 0.5   # qemu-nbd defaults: no multi-conn
for Q in 1 2; do
  D=$(sim/xensim-ctl create-domain guest$Q)
  B=/local/domain/0/backend/vbd/$D/51712; F=/local/domain/$D/device/vbd/51712
  xenstore-write $F/backend $B $F/backend-id 0 $F/virtual-device 51712 $F/device-type disk $F/state 1 \
    $B/frontend $F $B/frontend-id $D $B/params "nbd:nbd+unix:///?socket=$W/nbd.sock,timeout=5" $B/mode w \
    $B/online 1 $B/device-type disk $B/state 1
  xenstore-chmod -r $F n$D r0; xenstore-chmod -r $B n0 r$D; sleep 1.2
  s=$(date +%s)
  frontend-test/blkfront-test verify --domid $D --queues $Q --iodepth 64 --count 40000 --size 32M --flush-every 100 2>&1 | tail -1
  echo "queues=$Q: exit ${PIPESTATUS[0]}, $(( $(date +%s)-s )) s"
done
grep -E 'shared|no answer|connection lost' $W/blkbackd.log | cut -c1-230
kill $(cat $W/nbd.pid) $(cat $W/blkbackd.pid); sleep 1; kill $(cat $W/xensim.pid); sleep 0.5
